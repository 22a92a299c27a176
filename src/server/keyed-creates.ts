// Idempotency-Key on the requests that make a session (create, fork, handoff). A new session has no log yet to
// hold its key, so the key names the session instead: a keyed request makes the session whose id is a digest of
// the tenant, the command, its source session and the key, and its record keeps the key and a digest of the
// body (SessionRecord.idempotency). A retry finds that record, on any node and after a restart (records are in
// the store), and gets the same session; two at once are one run here and one store create across nodes (the
// store refuses an id that exists). The tenant is in the digest: one tenant's key never names another's
// session. A key lives as long as the session it made: after a delete, the same key makes a new one.
import { createHash } from "node:crypto";
import type { Brain } from "../core/brain.js";
import { bodyDigest } from "../core/command-keys.js";
import { BrainError } from "../core/errors.js";
import type { Made } from "../core/handoff.js";
import { sleep } from "../core/sleep.js";
import { DEFAULT_TENANT, type SessionRecord } from "../protocol/session.js";
import { ApiError } from "./errors.js";
import { awaitFirst, IDEMPOTENCY_HEADER, KEYED_WAIT_MS, keyReused } from "./idempotency.js";

/** A request that makes a session. */
export interface KeyedCreate {
  tenant: string;
  /** What makes it: a create, or a fork or handoff of session `source`. */
  command: "create" | "fork" | "handoff";
  source?: string;
  /** Its Idempotency-Key; undefined when the client sent none (the session then gets a random id). */
  key: string | undefined;
  /** The body as the client sent it: a retry sends it again. */
  body: unknown;
  /** The id the body chose (the default tenant's create): the key's session takes it instead of a digest. */
  id?: string;
}

/** The id of the session a keyed request makes: "k" and 43 base64url characters, a valid session id. */
export function keyedSessionId(tenant: string, command: string, source: string, key: string): string {
  const digest = createHash("sha256").update([tenant, command, source, key].join("\u0000"));
  return `k${digest.digest("base64url")}`;
}

export class KeyedCreates {
  /** Keyed requests making a session on this node now, by session id and key. */
  private readonly running = new Map<string, { sent: string; run: Promise<string> }>();

  /**
   * `waitMs`: how long a retry waits for the first request under its key (./idempotency.ts, awaitFirst), here or
   * on another node. `removeHalfMade`: what became of a session whose record keeps the key (removeHalfMade).
   */
  constructor(
    private readonly stored: (id: string) => Promise<SessionRecord | undefined>,
    private readonly waitMs = KEYED_WAIT_MS,
    private readonly removeHalfMade: (id: string) => Promise<MadeState> = async () => "made",
  ) {}

  /**
   * The id of the session `make` makes, or of the one an earlier request under the same key made. `make` checks
   * the request (its source session there and the caller's) and runs only when the key made nothing yet: a
   * retry whose first made its session and whose source was deleted since still learns the session it made.
   */
  async run(request: KeyedCreate, make: (made: Made) => Promise<{ id: string }>): Promise<string> {
    const { key } = request;
    if (key === undefined) return (await make({})).id;
    const source = request.source ?? "";
    const id = request.id ?? keyedSessionId(request.tenant, request.command, source, key);
    const sent = bodyDigest([request.command, source, request.body]);
    const slot = `${id}\u0000${key}`;
    const same = this.running.get(slot);
    if (same) {
      if (same.sent === sent)
        return awaitFirst(same.run, key, `${request.command} of session ${id}`, this.waitMs);
      throw anotherBody(key, request.command);
    }
    const run = (async () => {
      const until = Date.now() + this.waitMs;
      for (;;) {
        // A first request killed while it seeded the session (a fork restoring its checkpoint, a handoff) left a
        // record under the key that was never acknowledged: answered with it, the client would take a session
        // without its state for the one it asked for. Its retry makes it again instead; one still seeding it
        // elsewhere is waited for.
        const found = madeBy(await this.stored(id), request, sent);
        if (found && (await this.settled(id, request, until)) === "made") return id;
        try {
          await make({ id, idempotency: { key, sent } });
          return id;
        } catch (err) {
          // Not a retry: another node (or process) makes it under the key at the same moment, and the store
          // refused the id (its record is written) or its lease (not yet). Waited for as a retry waits for it:
          // answered now, the caller would get the lease's refusal, or the session while it is still seeded.
          if (madeBy(await this.stored(id), request, sent)) {
            if (Date.now() < until) continue;
            // The wait is over: a last look (a make failing over and over after writing its record ends here).
            if ((await this.settled(id, request, until)) === "made") return id;
            throw err;
          }
          if (!lockedOn(err, id)) throw err;
          if (Date.now() >= until) throw stillMaking(request, id, whoHolds(err.message), this.waitMs);
          await sleep(Math.min(HALF_MADE_POLL_MS, Math.max(1, until - Date.now())));
        }
      }
    })();
    this.running.set(slot, { sent, run });
    try {
      return await run;
    } finally {
      if (this.running.get(slot)?.run === run) this.running.delete(slot);
    }
  }

  /**
   * Session `id`, whose record keeps the key, once it is made or removed as half made: while a request elsewhere
   * (another node, another process) still makes it, looked at again until `until` (the keyed wait from the
   * request's start), then a 409.
   */
  private async settled(id: string, request: KeyedCreate, until: number): Promise<"made" | "removed"> {
    for (;;) {
      const state = await this.removeHalfMade(id);
      if (state === "made" || state === "removed") return state;
      if (Date.now() >= until) throw stillMaking(request, id, state.held, this.waitMs);
      await sleep(Math.min(HALF_MADE_POLL_MS, Math.max(1, until - Date.now())));
    }
  }
}

/** How often a retry looks again at a session another request still makes (ms). */
const HALF_MADE_POLL_MS = 250;

/**
 * What became of a session whose record keeps its key: `made` (its log holds its first event), `removed` (half
 * made by a request killed while making it: removed, to be made again), or `held` by a request still making it.
 */
export type MadeState = "made" | "removed" | { held: string };

/**
 * Whether `record` is the session an earlier `request` made under its key (with the body it sends now). A session
 * the key did not make is a 409, and one it made from another body a 422 (keyReused): answered with it, the client
 * would take for its own a session that is not what it asked for.
 */
function madeBy(record: SessionRecord | undefined, request: KeyedCreate, sent: string): boolean {
  if (!record) return false;
  const { key, command } = request;
  const made = record.idempotency;
  if ((record.tenant ?? DEFAULT_TENANT) === request.tenant && made && made.key === key) {
    if (made.sent === sent) return true;
    throw anotherBody(key!, command);
  }
  if (request.id !== undefined) throw new ApiError("conflict", `session "${record.id}" already exists`, "id");
  throw new ApiError(
    "conflict",
    `${IDEMPOTENCY_HEADER} "${key}" names session ${record.id}, which another request made; send a new key`,
    IDEMPOTENCY_HEADER,
  );
}

/**
 * Removes session `id` if a request killed while making it (seeding its native state, before its first event)
 * left it half made: its log empty and nobody holding it. A live request making it holds it from the start, and
 * the removal is refused (`locked`): on one host the log's lock, in a cluster the session's lease
 * (NatsSessionStore.createOpen), whose key outlives a killed node only until its TTL runs out. So no age tells
 * a dead maker from one at work. Left open: a maker that writes the first event and closes the session between
 * the look at its log and the removal (its lease or lock is let go only when the session closes).
 */
export async function removeHalfMade(
  brain: Pick<Brain, "firstSeq" | "lastSeq" | "delete">,
  id: string,
): Promise<MadeState> {
  if ((await brain.lastSeq(id)) > 0 || (await brain.firstSeq(id)) > 1) return "made";
  try {
    await brain.delete(id);
  } catch (err) {
    const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
    if (code === "locked") return { held: whoHolds((err as Error).message) };
    // Given up by its maker meanwhile (a seeding that failed removes its session): made again here.
    if (code === "not_found") return "removed";
    throw err;
  }
  return "removed";
}

/**
 * A refusal by session `id`'s lease or lock (code `locked`, naming the session it is of): another node or process
 * holds it. Only that one: a make refused on another session (a handoff's source held elsewhere) is that make's
 * own error.
 */
function lockedOn(err: unknown, id: string): err is BrainError {
  return err instanceof BrainError && err.code === "locked" && err.session === id;
}

/**
 * Who holds the session, from the store's `locked` refusal: it says that first, then what its caller should do
 * ("send its commands there", "wait for its lease to expire"), which does not fit a keyed request: stillMaking
 * says what that caller should do instead.
 */
function whoHolds(refusal: string): string {
  const advice = refusal.indexOf("; ");
  return advice === -1 ? refusal : refusal.slice(0, advice);
}

const stillMaking = (request: KeyedCreate, id: string, held: string, waitMs: number) =>
  new ApiError(
    "conflict",
    `${IDEMPOTENCY_HEADER} "${request.key}": session ${id}, which the first ${request.command} under it makes, is still being made after ${Math.round(waitMs / 1000)} s (${held}); send the same request under the same key again later to get it`,
    IDEMPOTENCY_HEADER,
  );

const anotherBody = (key: string, command: string) =>
  keyReused(key, `its first request, an earlier ${command}, had another body`, command);
