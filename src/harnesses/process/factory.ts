// Seed A's ProcessFactory: every entry of the config's "harnesses" block is a runner command spoken to over the
// stdio protocol. A shared entry runs one process for many sessions, one attachment each; any other entry runs
// one process per session, taken from a small pool of started spares when one is ready.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import { HOST_READ_AHEAD_BYTES } from "../read-gate.js";
import { type AttachmentTimeouts, DEFAULT_TIMEOUTS } from "./attachment-timeouts.js";
import { findMissing } from "./command.js";
import { ProcessHarness } from "./process-harness.js";
import { type RunnerCommand, RunnerProcess } from "./runner-process.js";
import { SparePool } from "./spare-pool.js";
import { Spawner } from "./spawner.js";
import type { StartedRunner } from "./started-runner.js";

/** One warm runner per harness: enough to hide the process start of the next session. */
export const DEFAULT_SPARES = 1;

/** The latest a spare is replaced after a session opened, when its first turn has not ended by then. */
const REFILL_AFTER_MS = 1000;
/**
 * How long after the new session's first turn ended its spare is replaced. A turn's last events are committed
 * after the runner's reply (the log drains them, then writes turn.settled); a runner started meanwhile (a fork of
 * this process, then Node's boot beside it) delayed those commits: with a fast reply, the first delta itself.
 */
const REFILL_DELAY_MS = 200;

export interface ProcessHarnessSpec extends RunnerCommand {
  /**
   * How many started, not yet opened runners to keep ready once the harness has been used (default 1; 0 for
   * none, e.g. a factory made for one session). Ignored when shared: sessions attach to the running host.
   */
  spares?: number;
  /** How long a taken spare's replacement waits at most for the new session's first turn to end (default 1 s). */
  refillAfterMs?: number;
  /** How long after that first turn ended the replacement starts (default 200 ms). */
  refillDelayMs?: number;
  supportsSteering?: boolean;
  timeouts?: Partial<AttachmentTimeouts>;
  /** false: the runner keeps state outside its native dir, so its sessions cannot move to another node. */
  movable?: boolean;
  /** false: the runner keeps no conversation Brain can find in its native dir; resume is not checked. */
  verifyHistory?: boolean;
  /** false: the runner calls no model provider (echo); HarnessFactory.needsProvider. */
  needsProvider?: boolean;
  /** HarnessFactory.operatorOptions: the runner's options a network caller may not set, and why. */
  operatorOptions?: HarnessFactory["operatorOptions"];
}

export class ProcessFactory implements HarnessFactory {
  readonly name: string;
  readonly supportsSteering: boolean;
  readonly needsProvider: boolean;
  /** A runner's options reach only the runner, which holds nothing but its bound tools and provider. */
  readonly clientOptions = "any";
  /** But for those the runner's spec says are the operator's: what its provider is paid or counted for. */
  readonly operatorOptions?: HarnessFactory["operatorOptions"];
  private readonly timeouts: AttachmentTimeouts;
  private sharedRunner: RunnerProcess | undefined;
  private readonly pool: SparePool | undefined;
  private readonly release: () => void;

  /** `spawner`: where runners are started; one may serve several factories (the runner family's all share one). */
  constructor(
    private readonly spec: ProcessHarnessSpec,
    private readonly spawner = new Spawner(),
  ) {
    this.release = spawner.use();
    this.name = spec.name;
    this.supportsSteering = spec.supportsSteering ?? true;
    this.needsProvider = spec.needsProvider ?? true;
    if (spec.operatorOptions) this.operatorOptions = spec.operatorOptions;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...spec.timeouts };
    const spares = spec.spares ?? DEFAULT_SPARES;
    if (!Number.isInteger(spares) || spares < 0)
      throw new Error(`harness "${spec.name}": spares must be a whole number ≥ 0, got ${spares}`);
    const host = spec.hostReadAheadBytes;
    if (host !== undefined && !(Number.isInteger(host) && host > 0))
      throw new Error(
        `harness "${spec.name}": hostReadAheadBytes must be a whole number of bytes > 0 (the default is ${HOST_READ_AHEAD_BYTES}), got ${host}`,
      );
    // Size 0 still takes a prestarted runner.
    if (!spec.shared) this.pool = new SparePool(() => this.startRunner(), spares);
  }

  /**
   * Starts the next session's runner now, so its process start overlaps the caller's own (`brain run` knows its
   * harness long before it has loaded the session store). A shared host starts with its first session as usual.
   * `started`: a runner the CLI spawned before the config was validated, taken when it is this harness's exact
   * launch (program, arguments, working directory, environment); true when it was taken.
   */
  prestart(started?: StartedRunner): boolean {
    if (!this.pool) return false;
    const child = started?.claim(this.spec);
    this.pool.startOne(child ? new RunnerProcess(this.spec, child) : undefined);
    return child !== undefined;
  }

  pinned(): string | undefined {
    return this.spec.movable === false
      ? `harness "${this.name}" is configured with movable: false (its runner keeps state outside its checkpoints)`
      : undefined;
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const missing = findMissing(this.spec.command, this.spec.args, this.spec.cwd ?? process.cwd());
    if (missing) throw new HarnessError("brain_error", `harness "${this.name}": ${missing}`);
    const spare = this.pool?.take();
    let harness = spare ? await this.openOn(spare, options, true) : undefined;
    // No spare, or one that died or hung before answering: that was never this session's failure, start afresh.
    // Not a spare: openOn throws rather than return undefined.
    harness ??= (await this.openOn(this.runnerFor(), options, false))!;
    if (this.pool) {
      const { refillAfterMs = REFILL_AFTER_MS, refillDelayMs = REFILL_DELAY_MS } = this.spec;
      refillAfterFirstTurn(this.pool, harness, refillAfterMs, refillDelayMs);
    }
    return harness;
  }

  /** Stops the shared process and every spare (per-session processes stop when their session closes). */
  async close(): Promise<void> {
    const runner = this.sharedRunner;
    this.sharedRunner = undefined;
    await Promise.all([runner?.stop(), this.pool?.close()]);
    this.release();
  }

  /** The bytes the shared runner holds back now for its sessions whose log is behind (see ReadGate); 0 if none. */
  heldBackBytes(): number {
    return this.sharedRunner?.heldBackBytes ?? 0;
  }

  /** The pids of the warm runners ready now. */
  sparePids(): number[] {
    return this.pool?.pids() ?? [];
  }

  /** Opens a session on `runner`; undefined only when `spare` and the runner died or hung before answering. */
  private async openOn(
    runner: RunnerProcess,
    options: HarnessOptions,
    spare: boolean,
  ): Promise<ProcessHarness | undefined> {
    const release = (h: ProcessHarness) => this.releaseRunner(runner, h);
    const harness = new ProcessHarness(
      runner,
      options,
      this.timeouts,
      release,
      this.spec.verifyHistory !== false,
      this.spec.shared === true,
    );
    try {
      await harness.open();
      return harness;
    } catch (err) {
      // A spare that died, or hung while it waited (it never answered: killed by the timeout), failed no session's
      // request: a fresh runner gets the open. One that refused the open answers for the session.
      const unusable = !runner.alive || harness.openUnanswered;
      await harness.close();
      if (spare && unusable) return undefined;
      if (err instanceof HarnessError)
        throw new HarnessError(err.code, `opening runner "${this.name}": ${err.message}`);
      throw err;
    }
  }

  private runnerFor(): RunnerProcess {
    if (!this.spec.shared) return this.startRunner();
    if (!this.sharedRunner?.alive) this.sharedRunner = this.startRunner();
    return this.sharedRunner;
  }

  private startRunner(): RunnerProcess {
    return new RunnerProcess(this.spec, this.spawner.spawn(this.spec));
  }

  private async releaseRunner(runner: RunnerProcess, _harness: ProcessHarness): Promise<void> {
    if (runner === this.sharedRunner && runner.alive) return; // peers keep it; detach already released us
    await runner.stop();
  }
}

/**
 * Tops the pool up once the session just opened has had its first turn (and `delayMs` more, for the turn's last
 * commits): a runner starting (Node's boot, its imports, a warm runner's rehearsal) takes far more CPU than a
 * turn, and started at the open it competed with the very turn the user was waiting for (a new session's first
 * delta was about twice as late). A session that does not prompt (or takes long) gets it after `latestMs` all
 * the same.
 */
function refillAfterFirstTurn(
  pool: SparePool,
  harness: ProcessHarness,
  latestMs: number,
  delayMs: number,
): void {
  let filled = false;
  const fill = () => {
    if (filled) return;
    filled = true;
    clearTimeout(latest);
    pool.fill();
  };
  // Neither timer is what keeps a one-shot Brain process alive.
  const latest = setTimeout(fill, latestMs);
  latest.unref();
  void harness.firstTurnEnded.then(() => {
    clearTimeout(latest);
    setTimeout(fill, delayMs).unref();
  });
}
