// The cluster session store: records in a KV bucket (compare-and-set updates), each log on its subject of the
// events stream, checkpoints in the object store, one owner per log through a lease. Native files live on the
// node that runs the session, under its own home: <home>/sessions/<id>/{native,checkpoints}, the latter a
// cache of what the object store holds.

import { randomUUID } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import nodePath from "node:path";
import type { SessionStore } from "../../core/brain.js";
import { OneAtATime } from "../../core/one-at-a-time.js";
import type { SessionSummary, UnreadableSession } from "../../core/store.js";
import type { SessionEvent } from "../../protocol/events.js";
import { checkRecord, newRecord, rewrittenRecord, type SessionRecord } from "../fs/session-record.js";
import { ReplicatedCheckpoints } from "./checkpoints.js";
import type { NatsContext } from "./context.js";
import { NatsDeletedSessions } from "./deleted-sessions.js";
import { checkId, errorMessage, fenced, NatsStoreError, natsFailure, storedUnanswered } from "./errors.js";
import { NatsEventLog } from "./event-log.js";
import { createOn, updateOn } from "./kv-update.js";
import { Lease, type LeaseHolder } from "./lease.js";
import { LogByteCounts } from "./log-bytes.js";
import { LogReader, lookAtLog } from "./log-read.js";
import { restoreNative, scanForOpen } from "./open-scan.js";
import { storedRevision } from "./record-gaps.js";
import { followSession } from "./record-gone.js";
import { readAllSummaries, readEntry } from "./record-read.js";
import { parseRecord } from "./record-slot.js";
import { bucketState, RecordView } from "./record-view.js";
import { markKey, readMark } from "./seq-mark.js";
import { TailBudget } from "./tail-budget.js";

type NewSession = Parameters<SessionStore["create"]>[0];
type SessionPatch = Parameters<SessionStore["update"]>[1];

export interface NatsSessionStoreOptions {
  /** This node's directory for native files and the checkpoint cache. */
  home: string;
  /** This node, as the owner of the logs it opens. */
  holder: LeaseHolder;
  /** Take a lease when opening a log (default true). Off only for tools that read. */
  leases?: boolean;
  /** How long a list waits for the watch of the records bucket to catch up before reading it in full (ms, default 5000). */
  listCatchUpMs?: number;
  /** Where the store says something worth an operator's eye (default: stderr). */
  warn?: (message: string) => void;
  /** Bytes of recent events the open logs keep in memory between them (default DEFAULT_TAIL_BUDGET). */
  tailBudgetBytes?: number;
}

/** A CAS update that keeps losing to other writers gives up after this many tries. */
const UPDATE_TRIES = 20;

export class NatsSessionStore implements SessionStore {
  readonly home: string;
  readonly root: string;
  /** Any node may have to take a session over: each completed turn is checkpointed into NATS. */
  readonly checkpointEveryTurn = true;
  /** Sessions whose harness cannot move stay on the node that first ran them: this one, when it was. */
  readonly node: string;
  /** The leases of the logs this node has open, by session. */
  private readonly leases = new Map<string, Lease>();
  /**
   * Per-session chain of this node's updates. Compare-and-set alone is not enough on nats-server 2.9: in a
   * cluster, writes racing with the same expected revision can all be accepted (measured here: 3 of 3).
   */
  private readonly updates = new OneAtATime();
  /** The records' summaries, as a watch of their bucket delivers them: what list() answers from. */
  private readonly view: RecordView;
  private readonly tails: TailBudget;
  /** What each session's log takes of the stream, as last counted here (./log-bytes.ts). */
  private readonly logSizes = new LogByteCounts();
  private readonly warn: (message: string) => void;
  /** The tombstones of keyed deletes (src/core/deleted-sessions.ts). */
  readonly deletes: NatsDeletedSessions;

  constructor(
    private readonly ctx: NatsContext,
    private readonly options: NatsSessionStoreOptions,
  ) {
    this.home = options.home;
    this.root = nodePath.join(options.home, "sessions");
    this.node = options.holder.node;
    this.deletes = new NatsDeletedSessions(ctx.deleted);
    this.tails = new TailBudget(options.tailBudgetBytes);
    this.warn = options.warn ?? ((message) => process.stderr.write(`brain: ${message}\n`));
    const records = ctx.records;
    this.view = new RecordView({
      watch: () => records.watch(),
      bucket: () => bucketState(records),
      revision: (seq) => storedRevision(records, seq),
      catchUpMs: options.listCatchUpMs ?? 5000,
      warn: this.warn,
    });
  }

  paths(id: string): { dir: string; native: string; checkpoints: string } {
    checkId(id);
    const dir = nodePath.join(this.root, id);
    return { dir, native: nodePath.join(dir, "native"), checkpoints: nodePath.join(dir, "checkpoints") };
  }

  async create(input: NewSession): Promise<SessionRecord> {
    const id = input.id ?? randomUUID();
    const paths = this.paths(id);
    const record = newRecord(id, input, badRequest);
    const value = JSON.stringify(record);
    try {
      await createOn(this.ctx.records, id, value);
    } catch (err) {
      // Stored though its answer was lost: the key holds this very record.
      if (await storedUnanswered(this.ctx.records, id, value)) {
        await this.localDirs(paths);
        return record;
      }
      if (/wrong last sequence/i.test(errorMessage(err))) {
        throw new NatsStoreError("bad_request", `session ${id} already exists`);
      }
      throw natsFailure(`cannot create session ${id}`, err);
    }
    await this.localDirs(paths);
    return record;
  }

  /**
   * create() and openLog() in one, the lease first: the node making a session holds its lease from before its
   * record exists until its log closes, so while it seeds the native state (a fork's checkpoint, a handoff's
   * history: before the first event) another node's keyed retry is refused its removal (`locked`) and tells a
   * session being made by a live node from one a dead node left half made, whose lease runs out
   * (src/server/keyed-creates.ts). Under create() then openLog() the record stood a while with no lease held.
   */
  async createOpen(
    input: NewSession,
  ): Promise<{ record: SessionRecord; log: NatsEventLog; durable: Promise<void> }> {
    const id = input.id ?? randomUUID();
    if (this.options.leases === false) {
      const record = await this.create({ ...input, id });
      return { record, log: await this.openLog(id), durable: Promise.resolve() };
    }
    checkId(id);
    const lease = await this.claim(id).catch(async (err: unknown) => {
      // An id in use is said as create() says it, whether or not a node has that session open now.
      if (await this.entry(id)) throw new NatsStoreError("bad_request", `session ${id} already exists`);
      throw err;
    });
    this.leases.set(id, lease);
    const release = async () => {
      if (this.leases.get(id) === lease) this.leases.delete(id);
      await lease.release();
    };
    let record: SessionRecord | undefined;
    try {
      record = await this.create({ ...input, id });
      const incarnation = String(Date.parse(record.created_at));
      const options = { guard: lease, onClose: release, incarnation, budget: this.tails };
      const log = await NatsEventLog.open(this.ctx, id, options);
      lease.onLost((err) => log.revoke(err));
      // The record is durable once stored (a KV create is acknowledged only once its replicas have it).
      return { record, log, durable: Promise.resolve() };
    } catch (err) {
      // Under the lease still: no half-made session is left for a retry to find.
      if (record) await this.remove(id).catch(() => {});
      await release();
      throw err;
    }
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    checkId(id);
    const entry = await this.entry(id);
    return entry ? parseRecord(entry, id) : undefined;
  }

  /**
   * Every session's summary (only `tenant`'s, given one), oldest first: from the view of the records bucket
   * (./record-view.ts), one request a list; by reading every record when the view cannot answer.
   */
  async list(unreadable?: (session: UnreadableSession) => void, tenant?: string): Promise<SessionSummary[]> {
    let viewed: SessionSummary[] | undefined;
    try {
      viewed = await this.view.list(unreadable, tenant);
    } catch (err) {
      throw natsFailure("cannot list sessions", err);
    }
    return viewed ?? readAllSummaries(this.ctx.records, (id) => this.entry(id), unreadable, tenant);
  }

  /** Stops watching the records bucket (the connection is the caller's to close). */
  async close(): Promise<void> {
    this.view.close();
  }

  /** Compare-and-set on the record's revision (./kv-update.ts): two nodes patching at once both land, neither is lost. */
  async update(id: string, patch: SessionPatch): Promise<SessionRecord> {
    checkId(id);
    return this.updates.run(id, () => this.casUpdate(id, patch));
  }

  private async casUpdate(id: string, patch: SessionPatch): Promise<SessionRecord> {
    for (let i = 0; i < UPDATE_TRIES; i++) {
      const entry = await this.entry(id);
      if (!entry) throw new NatsStoreError("bad_request", `session ${id} not found`);
      const current = parseRecord(entry, id);
      const change = typeof patch === "function" ? patch(current) : patch;
      const record = checkInput(`session ${id}`, {
        ...current,
        ...change,
        id,
        created_at: current.created_at,
      });
      // What the stored value holds beyond the record this node knows (a newer node's fields) is written back.
      const value = JSON.stringify(rewrittenRecord(entry.json(), record, change));
      try {
        await updateOn(this.ctx.records, id, value, entry.revision);
        return record;
      } catch (err) {
        if (/wrong last sequence/i.test(errorMessage(err))) continue;
        // Stored though its answer was lost: the key holds this very update, made on `entry`.
        if (await storedUnanswered(this.ctx.records, id, value, entry.revision)) return record;
        throw natsFailure(`cannot update session ${id}`, err);
      }
    }
    throw new NatsStoreError(
      "brain_error",
      `cannot update session ${id}: it kept changing under ${UPDATE_TRIES} tries`,
    );
  }

  /** Deletes the record, the log, the checkpoints and this node's files; refused while another node owns it. */
  async remove(id: string): Promise<void> {
    // The entry, not the record: one that cannot be read (damaged) is removed with its log and checkpoints too.
    checkId(id);
    if (!(await this.entry(id))) return;
    const lease = this.leases.get(id) ?? (await this.claim(id));
    try {
      await this.ctx.jsm.streams.purge(this.ctx.stream, { filter: this.ctx.subject(id) });
      await this.checkpoints(id).removeAll();
      await this.ctx.records.delete(id);
      await this.ctx.records.purge(markKey(id));
    } catch (err) {
      throw natsFailure(`cannot remove session ${id}`, err);
    } finally {
      this.leases.delete(id);
      this.logSizes.forget(id);
      await lease.release();
    }
    await rm(this.paths(id).dir, { recursive: true, force: true });
  }

  /** Opens the log for writing, claiming the session's lease (refused, code `locked`, while another node has it). */
  async openLog(id: string): Promise<NatsEventLog> {
    const record = await this.get(id);
    if (!record) throw new NatsStoreError("bad_request", `session ${id} not found`);
    await this.localDirs(this.paths(id));
    const incarnation = String(Date.parse(record.created_at));
    const budget = this.tails;
    if (this.options.leases === false) return NatsEventLog.open(this.ctx, id, { incarnation, budget });
    const lease = await this.claim(id);
    this.leases.set(id, lease);
    const release = async () => {
      if (this.leases.get(id) === lease) this.leases.delete(id);
      await lease.release();
    };
    try {
      const scan = await scanForOpen({ read: (after, limit) => this.readEvents(id, { after, limit }) });
      await restoreNative(this.paths(id).native, this.checkpoints(id), scan.logged, this.warn);
      const log = await NatsEventLog.open(this.ctx, id, {
        guard: lease,
        onClose: release,
        incarnation,
        budget,
        opened: scan.opened,
      });
      lease.onLost((err) => log.revoke(err));
      return log;
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** The lease of a log this node has open (to watch for its loss, or, in tests, to pause it). */
  lease(id: string): Lease | undefined {
    return this.leases.get(id);
  }

  /** The node owning the session now, if any. */
  owner(id: string): Promise<string | undefined> {
    return Lease.owner(this.ctx.leases, id);
  }

  // No tail(): the cluster log keeps no record of what is open beside its messages (an open reads them all once:
  // ./open-scan.ts), so the pending requests of a session not open here come from reading its whole log (core/pending.ts).

  /** The last seq acknowledged: from the header of the session's last message, not its events. */
  async lastSeq(id: string): Promise<number> {
    checkId(id);
    return (await new LogReader(this.ctx, id).last())?.end ?? (await this.marked(id));
  }

  /** The bytes of the session's events the stream holds now (./log-bytes.ts), for the bound on a log's size. */
  async logBytes(id: string): Promise<number> {
    checkId(id);
    return this.logSizes.bytes(id, new LogReader(this.ctx, id));
  }

  /** The bytes of the session's record (its config again): the view's of the bucket, else read (./record-view.ts). */
  async recordBytes(id: string): Promise<number> {
    checkId(id);
    return this.view.recordBytes(id) ?? (await this.entry(id))?.length ?? 0;
  }

  /** When the log's last batch was stored (the stream's stamp on its last message), and whether it never was. */
  async logLook(id: string): Promise<{ updatedAt?: string; unwritten: boolean }> {
    checkId(id);
    return lookAtLog(new LogReader(this.ctx, id), () => this.marked(id));
  }

  updatedAt = async (id: string) => (await this.logLook(id)).updatedAt;

  /** Where the seqs of a log whose messages the stream all let go end: those reserved (./seq-mark.ts), or 0. */
  private async marked(id: string): Promise<number> {
    const record = await this.get(id);
    return record ? readMark(this.ctx.records, id, String(Date.parse(record.created_at))) : 0;
  }

  /**
   * The first seq the log still holds: from the header of the session's first message. Brain drops nothing from
   * the stream, but an operator's limits on it (max_age, max_bytes, max_msgs) do, and a watcher whose cursor is
   * before what is left must be told (an SSE `dropped` message), not skipped past it.
   */
  async firstSeq(id: string): Promise<number> {
    checkId(id);
    return (await new LogReader(this.ctx, id).first())?.first ?? (await this.marked(id)) + 1;
  }

  async readEvents(id: string, range: { after?: number; limit?: number } = {}): Promise<SessionEvent[]> {
    checkId(id);
    return new LogReader(this.ctx, id).read(range.after ?? 0, range.limit ?? Number.POSITIVE_INFINITY);
  }

  /**
   * Every event after `after` (default: from the tail now), then each new batch as it is acknowledged, from
   * any node; `gone` once the session's record is deleted (or found deleted); `damaged` when it ends at a damaged
   * message. Resolves once following, with the stop function.
   */
  follow(
    id: string,
    after: number | undefined,
    listener: (events: SessionEvent[]) => void,
    gone?: () => void,
    damaged?: (err: Error) => void,
  ): Promise<() => void> {
    checkId(id);
    return followSession(this.ctx, id, { after, listener, gone, damaged, warn: this.warn });
  }

  checkpoints(id: string): ReplicatedCheckpoints {
    const paths = this.paths(id);
    return new ReplicatedCheckpoints(this.ctx.blobs, id, paths.checkpoints, this.ctx.js, this.ctx.records, {
      native: paths.native,
      owns: () => this.checkOwner(id),
    });
  }

  /** Whether this node has the session's log open under a lease that still holds. */
  holds(id: string): boolean {
    try {
      this.checkOwner(id);
      return true;
    } catch {
      return false;
    }
  }

  /** Throws (code `locked`) unless this node has the session's log open under a lease that still holds. */
  private checkOwner(id: string): void {
    if (this.options.leases === false) return;
    const lease = this.leases.get(id);
    if (!lease) throw fenced(id, "it does not hold the session's lease");
    lease.check();
  }

  private claim(id: string): Promise<Lease> {
    return Lease.claim(this.ctx.leases, id, this.options.holder, this.ctx.leaseTtlMs);
  }

  private entry = (id: string) => readEntry(this.ctx.records, id);

  private async localDirs(paths: { native: string; checkpoints: string }): Promise<void> {
    await mkdir(paths.native, { recursive: true, mode: 0o700 });
    await mkdir(paths.checkpoints, { recursive: true, mode: 0o700 });
  }
}

const badRequest = (message: string) => new NatsStoreError("bad_request", message);

function checkInput(what: string, value: unknown): SessionRecord {
  return checkRecord(what, value, badRequest);
}
