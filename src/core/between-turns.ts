// What a session does between turns (checkpoints) against a turn about to start. A checkpoint must hold the native
// state of exactly the turns the log places before its `checkpoint.created`, so no turn may start while one is
// taken. A prompt that arrives during a checkpoint waits for it rather than being refused: in cluster mode the
// session checkpoints after every turn on its own, and a client that prompts as soon as it sees `turn.settled`
// must not get a conflict for work it never asked for. A checkpoint asked for while a turn runs or is starting
// is refused: the turn may run for a long time, and the caller can checkpoint once it settles.
// While a rebuild rewrites the native dir, both are refused rather than made to wait: a turn or checkpoint then
// would run on, or record, a half-written dir, and the rebuild closes the very session a waiter holds.
import { SessionError } from "./errors.js";

export class BetweenTurns {
  /** The last checkpoint queued, settled or not: checkpoints are taken one at a time, in the order asked. */
  private queue: Promise<void> | undefined;
  /** A prompt waits for the checkpoints queued before it, or is writing its turn's start to the log. */
  private starting = false;

  /** `keptOut`: why neither may happen now (a rebuild rewriting the native dir), for the refusal to say. */
  constructor(private readonly keptOut: () => string | undefined = () => undefined) {}

  private refuseKeptOut(): void {
    const why = this.keptOut();
    if (why) throw new SessionError("conflict", why);
  }

  /**
   * Queues `take` behind the checkpoints queued before it. It is queued when this is called, before any await,
   * so a prompt that comes after waits for it.
   */
  checkpoint<T>(take: () => Promise<T>): Promise<T> {
    this.refuseKeptOut();
    if (this.starting) {
      throw new SessionError(
        "conflict",
        "a prompt is starting a turn: a checkpoint is taken between turns, so ask again once the turn settles",
      );
    }
    const run = (this.queue ?? Promise.resolve()).then(take);
    const done = run.then(
      () => {},
      () => {},
    );
    this.queue = done;
    void done.then(() => {
      if (this.queue === done) this.queue = undefined;
    });
    return run;
  }

  /** Resolves once no checkpoint is queued or being taken. */
  async settled(): Promise<void> {
    while (this.queue) await this.queue;
  }

  /**
   * Runs `start` (which makes the turn the running one) once the checkpoints queued before it are done; no
   * checkpoint is queued meanwhile. One turn starts at a time: a second prompt is refused, as it would be once
   * the first turn runs.
   */
  async startTurn<T>(start: () => Promise<T>): Promise<T> {
    if (this.starting) {
      throw new SessionError("conflict", "another prompt is starting a turn: wait for its turn to settle");
    }
    this.refuseKeptOut();
    this.starting = true;
    try {
      while (this.queue) await this.queue;
      this.refuseKeptOut();
      return await start();
    } finally {
      this.starting = false;
    }
  }
}
