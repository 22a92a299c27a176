// Idempotency-Key on the commands whose answer this node remembers. Taking control changes only the controller
// lease, itself this node's memory, with no event that could carry its key (the log-keyed commands: ./idempotency.ts),
// so this node keeps what each keyed take answered, the newest KEYED_ANSWERS_KEPT of each tenant: a client retries
// within seconds of a lost answer, and a tenant sending many keys pushes out only its own (kept together, one
// tenant's token could push out every other tenant's answers, and their retries would run again). A restart or a
// failover forgets them (docs/protocol.md says so), and a retry after one runs as a new request. A rebuild writes
// its key into its session.recovered, and a restore into its session's record, only once it is done: a retry while
// it runs shares its run here.
import { awaitFirst, KEYED_WAIT_MS, keyReused } from "./idempotency.js";

export const KEYED_ANSWERS_KEPT = 1024;

/** What a keyed answer is kept under: a tenant's key is its own, and names one command of one session. */
export interface KeyedSlot {
  tenant: string;
  session: string;
  /** The command ("control", "rebuild", "restore"): a key sent to another is another request. */
  route: string;
  key: string | undefined;
}

export class KeyedAnswers {
  /** By tenant, each keyed command's body digest and answer (a promise while it runs), oldest first. */
  private readonly tenants = new Map<string, Map<string, KeptAnswer>>();

  /** `waitMs`: how long a retry waits for the first run under its key (./idempotency.ts, awaitFirst). */
  constructor(
    private readonly kept = KEYED_ANSWERS_KEPT,
    private readonly waitMs = KEYED_WAIT_MS,
  ) {}

  /**
   * `run`'s answer, or the one it gave before under the same slot: a retry (the same `sent`) runs nothing again
   * and gets the first answer, and one that comes while the first still runs shares its run. The key sent with
   * another body is `refused` (given the first one's `sent`): answered with the first's answer, its client would
   * take for done what never ran. A run that fails is forgotten: it did nothing, and its retry runs again.
   */
  once<T>(slot: KeyedSlot, sent: string, run: () => T, refused = (_first: string) => anotherBody(slot)): T {
    if (slot.key === undefined) return run();
    const name = [slot.session, slot.route, slot.key].join("\u0000");
    const answers = this.tenants.get(slot.tenant) ?? new Map<string, KeptAnswer>();
    const earlier = answers.get(name);
    if (earlier) {
      if (earlier.sent !== sent) throw refused(earlier.sent);
      if (!(earlier.answer instanceof Promise)) return earlier.answer as T;
      const what = `${slot.route} of session ${slot.session}`;
      return awaitFirst(earlier.answer, slot.key, what, this.waitMs) as T;
    }
    const answer = run();
    const entry: KeptAnswer = { sent, answer, running: answer instanceof Promise };
    answers.set(name, entry);
    this.tenants.set(slot.tenant, answers);
    if (answer instanceof Promise) {
      answer.then(
        () => {
          entry.running = false;
          forgetOldest(answers, this.kept);
        },
        () => {
          if (answers.get(name) === entry) answers.delete(name);
        },
      );
    }
    forgetOldest(answers, this.kept);
    return answer;
  }
}

interface KeptAnswer {
  sent: string;
  /** The answer, or the promise of it (kept once settled: a retry awaits it the same way). */
  answer: unknown;
  running: boolean;
}

/**
 * Forgets the oldest settled answers past `kept`. A running one is never forgotten: its retry would run the command
 * a second time beside the first (a second rebuild or restore of the same session). Running ones are few (each
 * holds a request open), so a tenant past `kept` with every answer running keeps them until they settle.
 */
function forgetOldest(answers: Map<string, KeptAnswer>, kept: number): void {
  for (const [name, entry] of answers) {
    if (answers.size <= kept) return;
    if (!entry.running) answers.delete(name);
  }
}

/** The refusal of a key sent again with another body for an earlier `route` of `session`. */
export const anotherBody = ({ key, route, session }: KeyedSlot) =>
  keyReused(key!, `its first request, an earlier ${route} of session ${session}, had another body`, route);
