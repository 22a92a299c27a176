// A session's whole conversation, across the sessions it came from: a fork starts from its parent's checkpoint,
// a handoff from its source's log up to the handoff, and each may itself be a fork or handoff. Verification,
// rebuilds and handoffs all need the conversation as the model has seen it, not only this session's own log.
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import { SessionError } from "./errors.js";
import { type EventLog, forEachEvent, pageBeforeDamage } from "./event-log.js";
import type { ExpectedHistory } from "./native-check.js";
import { type HeldTurns, heldTurns, transcriptOf } from "./transcript.js";

export interface ChainStore {
  get(id: string): Promise<SessionRecord | undefined>;
  readEvents(id: string, range?: { after?: number; limit?: number }): Promise<SessionEvent[]>;
}

/** Where a conversation read ends: after an event's seq, or with a checkpoint's event (none of it if it is gone). */
type ReadEnd = { seq: number } | { checkpoint: string };

/** Events per page of a conversation read (a page also ends at PAGE_BYTES). */
const CONVERSATION_PAGE = 1000;

/**
 * A log's events after `after` for a transcript, read a page at a time, each run of deltas held as one event with
 * their text (the last delta's seq and turn): transcriptOf reads the same conversation from it. A long streamed
 * conversation is millions of deltas, a few bytes each on disk and hundreds as events: read whole, a fork's first
 * turn (which verifies its parent's history) took 470 MiB of heap for a parent of 2 million.
 */
export async function readConversation(
  read: (after: number, limit: number) => Promise<SessionEvent[]>,
  options: { after?: number; end?: ReadEnd } = {},
): Promise<SessionEvent[]> {
  const { end } = options;
  const out: SessionEvent[] = [];
  let run: SessionEvent | undefined;
  let text = "";
  const endRun = () => {
    if (run) out.push({ ...run, data: { text } } as SessionEvent);
    [run, text] = [undefined, ""];
    return out;
  };
  for (let after = options.after ?? 0; ; ) {
    // A log damaged past `end` reads up to it; one damaged before it fails on the page that starts at the damage.
    const page = await pageBeforeDamage(() => read(after, CONVERSATION_PAGE));
    const last = page.at(-1)?.seq;
    if (last === undefined || last <= after) break; // done (or a store that ignores the cursor: never loop)
    after = last;
    for (const e of page) {
      if (end && "seq" in end && e.seq > end.seq) return endRun();
      if (e.type === "assistant.delta") {
        [run, text] = [e, text + e.data.text];
        continue;
      }
      endRun();
      out.push(e);
      if (end && "checkpoint" in end && isCheckpoint(e, end.checkpoint)) return out;
    }
  }
  // The checkpoint's event is gone (retention retired it): every event kept came after it.
  return end && "checkpoint" in end ? [] : endRun();
}

const isCheckpoint = (e: SessionEvent, id: string) =>
  e.type === "checkpoint.created" && (e.data as { id: string }).id === id;

/** Forks and handoffs nest; a cycle cannot be made, but a damaged store must not loop forever. */
const MAX_DEPTH = 64;

/** The events of the sessions `record` came from, up to where it left them (empty for an original session). */
export async function ancestorEvents(
  store: ChainStore,
  record: SessionRecord,
  depth = 0,
): Promise<SessionEvent[]> {
  const from = record.forked_from ?? record.handoff_from;
  if (!from || depth >= MAX_DEPTH) return [];
  const parent = await store.get(from.session);
  // A parent is always of the session's own tenant (forks and handoffs keep it); a record naming another
  // tenant's session (a damaged or planted store) must not bring that tenant's conversation in.
  if (!parent || (parent.tenant ?? "default") !== (record.tenant ?? "default")) return [];
  if (!isParentOf(parent, record)) return [];
  // A fork's history ends with its checkpoint's event: none of it when retention retired that event (a fork may be
  // made of a checkpoint whose event is gone), as every event kept came after it.
  const end = record.forked_from
    ? { checkpoint: record.forked_from.checkpoint }
    : { seq: record.handoff_from!.seq };
  const read = (after: number, limit: number) => store.readEvents(parent.id, { after, limit });
  const cut = await readConversation(read, { end });
  return [...(await ancestorEvents(store, parent, depth + 1)), ...cut];
}

/**
 * Whether `parent` can be the session `child` came from: one made before it. A parent deleted and its id given to
 * a new session (a client-chosen id) is not: that one's conversation never reached the child, and taking it for
 * the child's history would fail the child's verification and seed its handoffs and rebuilds with it.
 */
export function isParentOf(parent: { created_at: string }, child: { created_at: string }): boolean {
  return Date.parse(parent.created_at) <= Date.parse(child.created_at);
}

/**
 * The ids of the checkpoints a log records, oldest first. `whole` is false when it no longer starts at seq 1 (its
 * first segments retired): older ones may be missing from `ids`, but the newest it records is still the newest.
 */
export async function loggedCheckpoints(
  log: Pick<EventLog, "read">,
  until?: string,
): Promise<{ ids: string[]; whole: boolean }> {
  // Read a page at a time, keeping the ids alone: a fork of a long session must not hold its whole log. The read
  // ends at checkpoint `until`, when given: a log damaged after it still forks from it.
  let first: number | undefined;
  const ids: string[] = [];
  await forEachEvent(log, (e) => {
    first ??= e.seq;
    if (e.type !== "checkpoint.created") return true;
    ids.push((e.data as { id: string }).id);
    return ids.at(-1) !== until;
  });
  return { ids, whole: (first ?? 1) === 1 };
}

/**
 * The id of the checkpoint a fork of session `id` starts from: `asked` ("latest" or an id) among the checkpoints
 * its log records. A manifest whose checkpoint.created never became durable (the host stopped between the two, or
 * a stale owner's in a cluster, numbered after the owner's) has no place in the conversation: the fork's history
 * (ancestorEvents) would run on past its files. A log that no longer starts at seq 1 (its first segments retired)
 * cannot say of an id asked for, and the store answers alone; "latest" is still the newest it records, and the
 * store's latest only when it records none (said in a process warning).
 */
export async function loggedCheckpoint(
  log: Pick<EventLog, "read">,
  asked: string,
  id: string,
): Promise<string> {
  const { ids: logged, whole } = await loggedCheckpoints(log, asked === "latest" ? undefined : asked);
  const found = asked === "latest" ? logged.at(-1) : logged.find((known) => known === asked);
  if (found !== undefined) return found;
  if (!whole) {
    if (asked === "latest") {
      process.emitWarning(
        `session ${id}: the part of its log still held records no checkpoint, so "latest" is the newest its store ` +
          "holds, which may be one whose checkpoint.created never became durable; name a checkpoint id to be sure",
        { code: "BRAIN_CHECKPOINT_UNLOGGED" },
      );
    }
    return asked;
  }
  const known =
    logged.length === 0
      ? `it records none: checkpoint the session between turns first (brain checkpoint ${id}, or POST /v1/sessions/${id}/checkpoints)`
      : `it records ${logged.join(", ")}, or "latest"`;
  throw new SessionError(
    "bad_request",
    `no checkpoint ${JSON.stringify(asked)} in the log of session ${id} (a checkpoint the host stopped while taking is not one); ${known}`,
  );
}

/** Tail windows read before the whole log: the last answered turn is nearly always near the end. */
const WINDOWS = [256, 4096];

/**
 * What the harness's native state must hold: the last prompt the model answered, from the end of the session's
 * own log, or, before its first answered turn, from the sessions it came from. Undefined when no turn was
 * answered anywhere (a new session has nothing to hold).
 */
export async function expectedHistory(
  store: ChainStore,
  record: SessionRecord,
  log: EventLog,
): Promise<ExpectedHistory | undefined> {
  // Seeded with a summary: the native state holds only what came after the seeding.
  const seeded = record.seeded;
  if (seeded?.how === "summary") {
    return expectation(heldTurns(transcriptOf(await readConversation(pages(log), { after: seeded.seq }))));
  }
  for (const size of WINDOWS) {
    if (log.lastSeq <= size) break;
    const held = heldTurns(transcriptOf(await log.read(log.lastSeq - size)));
    if (held.lastPrompt !== undefined) return expectation({ ...held, turns: 0 });
  }
  const own = await readConversation(pages(log));
  return expectation(heldTurns(transcriptOf([...(await ancestorEvents(store, record)), ...own])));
}

/**
 * The check a session's harness opens with. A session this host has just created from nothing (not a fork, not
 * a handoff, not seeded) has an empty log, and its first harness open always comes before its first turn runs:
 * that open has nothing to hold, and skips reading the log. Every later open checks.
 */
export function historyCheck(
  store: ChainStore,
  record: SessionRecord,
  log: EventLog,
  created: boolean,
): HistoryCheck {
  let fresh = created && !record.forked_from && !record.handoff_from && !record.seeded;
  let kept: Promise<ExpectedHistory | undefined> | undefined;
  const read = () => {
    if (!fresh) return expectedHistory(store, record, log);
    fresh = false;
    return Promise.resolve(undefined);
  };
  const check = () => {
    const result = kept ?? read();
    kept = undefined;
    return result;
  };
  const ahead = async () => {
    kept = read();
    await kept.catch((err: unknown) => {
      kept = undefined;
      throw err;
    });
  };
  return Object.assign(check, { ahead });
}

/** The check a harness opens with, and a read of it ahead of that open. */
export interface HistoryCheck {
  (): Promise<ExpectedHistory | undefined>;
  /** Reads now what the next check returns: a log that cannot be read fails this, the result is kept for it. */
  ahead(): Promise<void>;
}

const pages = (log: Pick<EventLog, "read">) => (after: number, limit: number) => log.read(after, limit);

/** `turns` 0: not counted (a window of the log only). */
function expectation(held: HeldTurns): ExpectedHistory | undefined {
  if (held.lastPrompt === undefined) return undefined;
  return {
    lastPrompt: held.lastPrompt,
    ...(held.turns ? { turns: held.turns } : {}),
    ...(held.lastKept !== undefined ? { lastKept: held.lastKept } : {}),
  };
}
