// The store behind the host: session records, their event logs, native dirs and checkpoints. src/store/fs keeps
// them on one machine's disk, src/store/nats on NATS JetStream for a cluster; the core does not know which.
import type { SessionEvent } from "../protocol/events.js";
import { DEFAULT_TENANT, type SessionRecord } from "../protocol/session.js";
import type { Checkpoints } from "./checkpoints/index.js";
import type { DeletedSessions } from "./deleted-sessions.js";
import type { EventLog } from "./event-log.js";
import type { CompactingStore } from "./retention.js";

/** Where a log ends: its last seq and the requests open there (their request events, in log order). */
export interface LogTail {
  lastSeq: number;
  requests: SessionEvent[];
}

/** What the host needs from a session store (src/store/fs for one machine). */
export type NewSessionRecord = Omit<SessionRecord, "id" | "created_at" | "status"> & {
  id?: string;
  /**
   * The created_at of the session it came from (a fork's or handoff's parent): the new record's is never earlier.
   * Nodes of a cluster stamp records with their own clocks, and a child stamped before its parent (a clock behind)
   * would not be taken for its child (isParentOf): its parent's conversation would be lost to it.
   */
  not_before?: string;
};

/**
 * What a list gives of each session: what orders, filters and names it, small whatever its config holds. A list
 * of every session stays cheap to hold; the full record is read with get(), one session at a time.
 */
export type SessionSummary = Pick<
  SessionRecord,
  "id" | "harness" | "created_at" | "status" | "tenant" | "forked_from" | "handoff_from"
>;

/** A stored session whose record a list could not read: what is known of it, and why (naming the file and the fix). */
export interface UnreadableSession {
  id: string;
  created_at: string;
  /**
   * created_at is not the record's (the file is not JSON) but when it was last written, only to give it a place in
   * lists: nothing else (which sessions it may be a fork of) can be told from it.
   */
  undated?: true;
  tenant?: string;
  error: string;
}

/** What an update of a session record may change. */
export type RecordPatch = Partial<Omit<SessionRecord, "id" | "created_at">>;

/** Whose a listed session is: its tenant, absent meaning the default tenant's (the operator's). */
export const listedTenant = (session: { tenant?: string }): string => session.tenant ?? DEFAULT_TENANT;

/** A follow's listener of batches, then what ends it: the session deleted, or a damaged part of its log met. */
export type FollowCallbacks = [
  listener: (events: SessionEvent[]) => void,
  gone?: () => void,
  damaged?: (err: Error) => void,
];

export interface SessionStore {
  create(input: NewSessionRecord): Promise<SessionRecord>;
  /**
   * create() and openLog() in one, for stores that can overlap them: the log is this caller's from the start,
   * and `durable` settles once the record and the log are durable (what create() waits for before it returns).
   * The caller writes the log's first batch meanwhile and acknowledges the session only once both are durable.
   * A failed `durable` has closed the log and removed the session.
   */
  createOpen?(
    input: NewSessionRecord,
  ): Promise<{ record: SessionRecord; log: EventLog; durable: Promise<void> }>;
  get(id: string): Promise<SessionRecord | undefined>;
  /**
   * Every session's summary, oldest first (created_at, then id): never the full records, which may be large. A
   * record that cannot be read fails the list, or, given `unreadable`, is told to it and left out. Given `tenant`,
   * only that tenant's sessions (and unreadable records), each store skipping the others' as early as it can: one
   * tenant's list must not cost what every tenant's sessions together cost.
   */
  list(unreadable?: (session: UnreadableSession) => void, tenant?: string): Promise<SessionSummary[]>;
  /**
   * Patches the record. A function is given the record as it is when the patch is made (on a retried
   * compare-and-set, as it is then), for a patch that builds on what is there (a list added to): two such updates
   * at once, here or on two nodes, both land.
   */
  update(id: string, patch: RecordPatch | ((current: SessionRecord) => RecordPatch)): Promise<SessionRecord>;
  paths(id: string): { native: string; checkpoints: string };
  /** Where the store keeps its files ($BRAIN_HOME), when on disk: restores into it are refused. */
  readonly home?: string;
  openLog(id: string): Promise<EventLog>;
  /** Every durable event of a session that is not open here, read without taking its log's write lock. */
  readEvents(id: string, range?: { after?: number; limit?: number }): Promise<SessionEvent[]>;
  /** The last seq of a session's log not open here, found without reading all of it (0 for none). */
  lastSeq?(id: string): Promise<number>;
  /**
   * Where a session's log not open here ends, found without reading all of it: its last seq (0 for none) and
   * the request events still waiting for an answer there, in the order they were made. A store without it
   * (NATS keeps no open state beside its log) has the host read the whole log instead.
   */
  tail?(id: string): Promise<LogTail>;
  /**
   * When the session's log was last written (ISO 8601), from the log's metadata (a file's mtime, a stream's last
   * message), never its events: one cheap look per session, so a list can say how recent each one is.
   */
  updatedAt?(id: string): Promise<string | undefined>;
  /**
   * updatedAt, and whether the log holds no event and never did (its session's maker stopped before the first,
   * session.opened, and the next open removes it; or is making it now, nobody told of it yet), from the same one
   * look at the log's metadata, so a list can leave such a session out at no cost beyond its date.
   */
  logLook?(id: string): Promise<{ updatedAt?: string; unwritten: boolean }>;
  /** The bytes the session's log takes in the store now (every segment it holds), for the bound on a log's size. */
  logBytes?(id: string): Promise<number>;
  /** The bytes of the session's record (its config again), counted with its log's; cheaply, or not given. */
  recordBytes?(id: string): Promise<number>;
  /** The first seq the session's log still holds (stores whose retention can drop a log's oldest events). */
  firstSeq?(id: string): Promise<number>;
  /** Deletes the session and all its files. */
  remove(id: string): Promise<void>;
  /** The tombstones of keyed deletes, so a retry gets its first answer (./deleted-sessions.ts). */
  readonly deletes?: DeletedSessions;
  /** Compacts a closed session's log (stores that can; see ./retention.ts). */
  compact?: CompactingStore["compact"];
  /** Archives or drops the oldest segments of a closed session's log (stores that can; ./retention.ts). */
  retire?: CompactingStore["retire"];
  /**
   * Follows a session's log written by another process (cluster mode: another node): each batch once it is
   * durable, from the tail as it is when this resolves (`after` undefined) or after a seq. `gone` is called once
   * if the session is deleted meanwhile (by whichever process). `damaged` is called once if the follow meets a
   * damaged part of the log, and it ends there: the events before it were given, and a read from there fails with
   * `err`, whose message says where the damage is. Returns the stop.
   */
  follow?(id: string, after: number | undefined, ...on: FollowCallbacks): Promise<() => void>;
  /** Cluster mode: this node's name. A session whose harness cannot move stays on the node that first ran it. */
  readonly node?: string;
  /** Lets go of what the store made ahead of need (the embedded store's spare session directory). */
  close?(): Promise<void>;
  /** Checkpoint every session after each completed turn (cluster mode: another node may have to take over). */
  readonly checkpointEveryTurn?: boolean;
  /** The session's checkpoints when the store keeps them itself (cluster); else files in paths(id).checkpoints. */
  checkpoints?(id: string): Checkpoints;
}

/**
 * Who owns session `id` (undefined for no such session): its record's tenant, or, when the record cannot be read
 * (damaged, hand-edited), what the list still tells of it: the tenant the file names when it parses as JSON, else
 * none, which is the default tenant's (the operator's), as only its tokens are shown such a record in lists. So a
 * damaged session is deleted through the API by its owner, and by no other tenant.
 */
export async function ownerOf(
  store: Pick<SessionStore, "get" | "list">,
  id: string,
): Promise<{ tenant?: string } | undefined> {
  let record: SessionRecord | undefined;
  try {
    record = await store.get(id);
  } catch (err) {
    let damaged: UnreadableSession | undefined;
    await store.list((session) => {
      if (session.id === id) damaged = session;
    });
    if (!damaged) throw err;
    record = damaged as UnreadableSession & SessionRecord;
  }
  return record && (record.tenant === undefined ? {} : { tenant: record.tenant });
}

/**
 * Records a closed session as closed; false when it was deleted meanwhile (a delete waits for the close it comes
 * during, then removes the session: nothing is left to mark, and the deletion is the news). Called before the
 * live session is let go: a request that reopens the session afterwards reads it closed and records it open again;
 * marked after, a session reopened in between ran on while its record said closed.
 */
export async function markClosed(store: SessionStore, id: string): Promise<boolean> {
  try {
    await store.update(id, { status: "closed" });
    return true;
  } catch (err) {
    if (await store.get(id).catch(() => undefined)) throw err;
    return false;
  }
}
