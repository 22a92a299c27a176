// The host: creates, opens, forks and restores sessions on a store, with one live Session object per id.
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import type { BrainOptions } from "./brain-options.js";
import { CheckpointBytes } from "./checkpoint-bytes.js";
import { loggedCheckpoint, readConversation } from "./conversation-chain.js";
import { type CreatedSession, createdSession, openCreated, refuseUnmakeable } from "./created-session.js";
import { hostSecrets, recordSecrets } from "./credentials.js";
import { DeletingMarks } from "./deleting-marks.js";
import {
  conversationEvents,
  forkInput,
  forkSeeding,
  type HandoffOptions,
  handoffLayers,
  type Made,
  ranOnlyOn,
  rebuiltData,
  refuseRunning,
  requireHarness,
  type Seeded,
  seedNative,
} from "./handoff.js";
import { type LiveChange, type LiveSession, LiveSessions } from "./live-sessions.js";
import { type HeldBytes, SessionLogBound } from "./log-bound.js";
import { type NativeDisk, nativeDisk } from "./native-disk.js";
import { OpenSessionLimit } from "./open-limit.js";
import { checkpointsOf, openSession, storedRecord } from "./open-session.js";
import { type PendingRequest, pendingInStore } from "./pending.js";
import { Providers } from "./providers.js";
import { reseed } from "./rebuild-aside.js";
import { Redactor } from "./redact.js";
import type { HarnessRegistry } from "./registry.js";
import { orNamingEarlier, type RestoreKey, restoreInto } from "./restores.js";
import { ClosedLogs, type CompactResult, type SegmentPolicy } from "./retention.js";
import type { Session } from "./session.js";
import { type InputLayers, type NewSessionInput, resolveSessionInput } from "./session-input.js";
import type { FollowCallbacks } from "./store.js";
import { markClosed, ownerOf, type SessionSummary, type UnreadableSession } from "./store.js";
import { StoredSessionLimit } from "./stored-limit.js";
import { TenantBytes } from "./tenant-bytes.js";
import { transcriptOf } from "./transcript.js";

export type { BrainOptions } from "./brain-options.js";
export type { NewSessionInput } from "./session-input.js";
export type { SessionStore } from "./store.js";

export class Brain {
  private readonly live = new LiveSessions();
  private readonly openLimit: OpenSessionLimit;
  private readonly storedLimit: StoredSessionLimit;
  /** The bytes a session and its tenant may hold (log-bound.ts): what a client adds is admitted through it. */
  readonly logBound: SessionLogBound;
  private readonly checkpointBytes = new CheckpointBytes();
  private readonly tenantBytes: TenantBytes;
  /** Compaction and retirement of logs not open here: opening one waits for its job to end. */
  private readonly closedLogs: ClosedLogs;
  /** The host's secrets; each session adds its own (its provider key, its MCP servers' variables). */
  readonly redactor: Redactor;
  readonly providers: Providers;
  /** The store's tombstones of keyed deletes, when it keeps them (./deleted-sessions.ts). */
  readonly deletes: BrainOptions["store"]["deletes"];
  /** Marks on the stored records of deletes under way, for forks made on other nodes (./deleting-marks.ts). */
  readonly deleting: DeletingMarks;

  constructor(private readonly options: BrainOptions) {
    this.deletes = options.store.deletes;
    this.deleting = new DeletingMarks(options.store);
    this.closedLogs = new ClosedLogs(options.store, (id) => this.live.busy(id));
    this.openLimit = new OpenSessionLimit(this.live, options.openSessionsPerTenant);
    this.storedLimit = new StoredSessionLimit((u) => options.store.list(u), options.storedSessionsPerTenant);
    const tenants = new TenantBytes(
      (tenant) => options.store.list(undefined, tenant),
      async (id) => (await this.sessionBytes(id))?.bytes,
      options.logBytesPerTenant,
    );
    this.tenantBytes = tenants;
    this.logBound = new SessionLogBound((id) => this.heldBytes(id), options.logBytesPerSession, tenants);
    // What a session's last turns wrote counts in its tenant's sum once it closes. Then its checkpoints' blob
    // hashes are let go: a host that closes many sessions would keep them all, and the manifests give them again.
    this.live.subscribe((change) => {
      if (change.type !== "closed") return;
      const forget = () => this.checkpointBytes.forget(change.id);
      if (options.logBytesPerTenant === undefined) return forget();
      void this.tenantOf(change.id)
        .then((tenant) => tenants.measure(tenant, change.id))
        .catch(() => {})
        .finally(forget);
    });
    this.providers = new Providers(options);
    this.redactor = new Redactor([
      ...hostSecrets(options.providers, options.secretNames, options.env),
      ...(options.secrets ?? []),
    ]);
  }

  get harnesses(): HarnessRegistry {
    return this.options.harnesses;
  }

  /** A new session's input: the defaults, an agent definition and the call's own settings, over each other. */
  resolveInput(layers: InputLayers): NewSessionInput {
    const { harnesses } = this.options;
    return resolveSessionInput(layers, harnesses.names(), (name) => harnesses.get(name));
  }

  /** Creates a session, unless its tenant holds its bytes' bound. Its harness starts with the first prompt. */
  create = (input: NewSessionInput): Promise<Session> => this.createRecord(input);

  /** What the store holds of session `id`: its log's bytes and its checkpoints' (undefined: the store cannot tell). */
  private async sessionBytes(id: string): Promise<Omit<HeldBytes, "tenant"> | undefined> {
    const log = await this.options.store.logBytes?.(id);
    if (log === undefined) return undefined;
    const record = (await this.options.store.recordBytes?.(id)) ?? 0;
    const checkpoints = await this.checkpointBytes.of(id, checkpointsOf(this.options, id));
    return { bytes: record + log + checkpoints.bytes, checkpoints: checkpoints.count };
  }

  private async heldBytes(id: string): Promise<HeldBytes | undefined> {
    const held = await this.sessionBytes(id);
    if (!held) return undefined;
    const tenant = await this.tenantOf(id);
    return tenant === undefined ? held : { ...held, tenant };
  }

  /** The tenant owning session `id`: the open session's, else its record's. */
  private async tenantOf(id: string): Promise<string | undefined> {
    const live = this.live.find(id);
    return live ? live.tenant : (await this.record(id)).tenant;
  }

  /** The live session for `id`, opened from the store when needed (after a compaction of its log ends). */
  async session(id: string): Promise<Session> {
    // Held from sweeps until it is open: one started while its tenant is read would take the log's lock from it.
    return this.closedLogs.excluding(id, () => {
      const open = () => this.live.get(id, () => this.openSession(id));
      return this.openLimit.reopen(id, async () => (await this.record(id)).tenant, open);
    });
  }

  /** Compacts logs not open here idle for `idleMs`; one asked for meanwhile opens when its compaction ends. */
  compactIdle(idleMs: number): Promise<{ id: string; result: CompactResult }[]> {
    return this.closedLogs.compactIdle(idleMs);
  }

  /** Archives or drops old segments of logs not open here; sessions forked or handed off from keep theirs. */
  retireIdle = (policy: SegmentPolicy, warn?: (message: string) => void) =>
    this.closedLogs.retireIdle(policy, warn);

  /** The first seq a session's log still holds: 1, unless retention archived or dropped its oldest segments. */
  async firstSeq(id: string): Promise<number> {
    const live = this.live.find(id)?.session.log;
    return (live ? live.firstSeq : await this.options.store.firstSeq?.(id)) ?? 1;
  }

  /** The last seq of a session's log: the open log's own, else the store's, read from the log's tail. */
  async lastSeq(id: string): Promise<number> {
    const live = this.live.find(id);
    if (live) return live.session.log.lastSeq;
    await this.record(id);
    const { store } = this.options;
    return store.lastSeq ? store.lastSeq(id) : ((await this.events(id)).at(-1)?.seq ?? 0);
  }

  /** When a session's log was last written, if the store tells cheaply; never fails the view it only dates. */
  updatedAt = async (id: string) => this.options.store.updatedAt?.(id).catch(() => undefined);
  /** updatedAt, and whether the log was never written (core/store.ts logLook), if the store tells; never fails. */
  logLook = async (id: string) => this.options.store.logLook?.(id).catch(() => undefined);

  /** What session `id`'s native state takes on this machine's disk (`sessions show`, GET /v1/sessions/{id}). */
  nativeDisk = (id: string): Promise<NativeDisk> => nativeDisk(this.options.store.paths(id).native);

  /** A session's last seq and its requests waiting for an answer: the open session's own, else its stored log's. */
  async pending(id: string): Promise<{ lastSeq: number; pending: PendingRequest[] }> {
    const live = this.live.find(id);
    if (live) return { lastSeq: live.session.log.lastSeq, pending: live.session.pendingRequests() };
    await this.record(id);
    return pendingInStore(this.options.store, id);
  }

  /** The session if it is open in this process now, with its tenant. */
  liveSession = (id: string): LiveSession | undefined => this.live.find(id);

  /** Every session open in this process now. */
  liveSessions = (): LiveSession[] => this.live.list();

  /** Calls `listener` as sessions open, close and are deleted. Returns the unsubscribe function. */
  subscribe = (listener: (change: LiveChange) => void): (() => void) => this.live.subscribe(listener);

  /** A session's durable events after `after`: from its live log if it is open here, else from the store. */
  async events(id: string, after = 0, limit = Number.POSITIVE_INFINITY): Promise<SessionEvent[]> {
    const live = this.live.find(id);
    if (live) return live.session.log.read(after, Number.isFinite(limit) ? limit : undefined);
    await this.record(id);
    // A cursor read: the store finds `after` without reading what comes before it.
    return this.options.store.readEvents(id, { after, ...(Number.isFinite(limit) ? { limit } : {}) });
  }

  /** Every stored session's summary, oldest first (only `tenant`'s, given one: see SessionStore.list). */
  async list(unreadable?: (session: UnreadableSession) => void, tenant?: string): Promise<SessionSummary[]> {
    return this.options.store.list(unreadable, tenant);
  }

  /** Follows a session another node writes, from its tail on (SessionStore.follow); else undefined. */
  followStored(id: string, ...on: FollowCallbacks) {
    return this.options.store.follow?.(id, undefined, ...on);
  }

  /** The record as clients see it: what its log would never hold (recordSecrets, the host's) redacted. */
  shownRecord(record: SessionRecord): SessionRecord {
    return this.redactor.with(recordSecrets(record, this.options.env ?? process.env)).redactDeep(record);
  }

  record(id: string): Promise<SessionRecord> {
    return storedRecord(this.options, id);
  }

  /** A new session whose native state starts as `checkpoint` of session `id`. */
  async fork(id: string, checkpoint = "latest", made: Made = {}): Promise<Session> {
    const source = await this.record(id);
    const checkpoints = checkpointsOf(this.options, id);
    const log = { read: (after: number, limit?: number) => this.events(id, after, limit) };
    const at = await loggedCheckpoint(log, checkpoint, id);
    const manifest = await orNamingEarlier(log, id, at, (cp) => checkpoints.get(cp));
    const forked_from = { session: id, checkpoint: manifest.id };
    const input = { ...forkInput(source), ...made };
    const seeded = await forkSeeding(this.options, source, manifest.id);
    if (seeded) return this.createRecord(input, { forked_from, seeded, not_before: source.created_at });
    return this.createRecord(input, { forked_from, not_before: source.created_at }, async (dir) => {
      await orNamingEarlier(log, id, manifest.id, (cp) => checkpoints.restore(cp, dir));
    });
  }

  /**
   * A new session on `options.to` that continues session `id`'s conversation: its native state is seeded from
   * the log (or, for a family that cannot be, the history goes as a marked summary in its first prompt). The
   * original stays as it was. `limits` are a network caller's (the operator's defaults, its provider grant).
   */
  async handoff(id: string, options: HandoffOptions, limits: Pick<InputLayers, "defaults" | "grant"> = {}) {
    const source = await this.record(id);
    const harnesses = this.options.harnesses.names();
    requireHarness(harnesses, options.to);
    refuseRunning(this.live.find(id)?.session, "handoff");
    const own = await readConversation((after, limit) => this.events(id, after, limit));
    const events = await conversationEvents(this.options.store, source, own);
    const from = harnesses.includes(source.harness) ? this.harnesses.get(source.harness) : undefined;
    const { operator, call } = handoffLayers(source, options, from ? from.clientOptions : "any");
    // What a caller's create would be refused, its handoff is too: the same checks, the operator's same limits.
    const input = this.resolveInput({ ...limits, agent: operator, call, callPermissionsTighten: true });
    const config = input.config ?? {};
    const transcript = transcriptOf(events);
    const sameFamily = ranOnlyOn(events, options.to);
    const seeder = this.options.seeders?.[options.to];
    const seeded: Seeded = { how: seeder ? "native" : "summary", seq: 0 };
    const handoff_from = { session: id, seq: own.at(-1)?.seq ?? 0 };
    return this.createRecord(input, { handoff_from, seeded, not_before: source.created_at }, async (dir) => {
      await seedNative(seeder, { dir, config, transcript, sameFamily }, 0);
    });
  }

  /** Rewrites session `id`'s native state from Brain's log (as a handoff to its family does); one at a time. */
  rebuild(id: string, key?: string): Promise<{ seeded: Seeded; aside: string }> {
    return this.live.exclusive(id, "rebuilt", async () => {
      const record = await this.record(id);
      refuseRunning(this.live.find(id)?.session, "rebuild");
      // A running harness would write into the files replaced: stop it. The log lock held keeps other processes out.
      if (this.live.find(id)) await this.closeSession(id);
      await this.session(id);
      const own = await readConversation((after, limit) => this.events(id, after, limit));
      const events = await conversationEvents(this.options.store, record, own);
      const native = this.options.store.paths(id).native;
      const transcript = transcriptOf(events);
      const input = { dir: native, config: record.config, transcript, sameFamily: true };
      const seeder = this.options.seeders?.[record.harness];
      const { seeded, aside } = await reseed(native, () => seedNative(seeder, input, own.at(-1)?.seq ?? 0));
      await this.options.store.update(id, { seeded });
      // Reopened, so the session runs with the record that says how it was seeded.
      await this.closeSession(id);
      // Through the session, whose index of keys sees the append (a keyed prompt meanwhile may have read it).
      const data = rebuiltData(seeded, aside, key);
      await (await this.session(id)).append([{ type: "session.recovered", data }]);
      return { seeded, aside };
    });
  }

  /**
   * Writes a checkpoint's files into `dir` (new or empty); "latest" is the last the log records, as for a fork. A
   * keyed restore's record keeps its answer (./restores.ts).
   */
  async restore(id: string, checkpoint: string, dir: string, keyed?: RestoreKey): Promise<string> {
    await this.record(id);
    return restoreInto(this.options, id, { checkpoint, dir, keyed }, (after, limit) =>
      this.events(id, after, limit),
    );
  }

  /** Resolves once no close or delete of `id` is under way here: ./live-sessions.ts closeDone. */
  closeDone = (id: string): Promise<void> => this.live.closeDone(id);

  async closeSession(id: string): Promise<void> {
    // One not open here opens (passively: no harness starts) only to close, taking no room in the tenant's bound
    // (else a tenant at its bound could not close a session a stopped daemon left open). Marked before let go: markClosed.
    await this.closedLogs.idle(id);
    const close = (session: Session) => session.close().then(() => markClosed(this.options.store, id));
    await this.live.close(id, () => this.openSession(id), close);
  }

  /** Closes the session if it is live, then deletes it and all its files (once no retention job holds its log). */
  async delete(id: string): Promise<void> {
    const { tenant } = (await ownerOf(this.options.store, id)) ?? (await this.record(id));
    const remove = async () => {
      await (await this.live.take(id)?.catch(() => undefined))?.close();
      await this.options.store.remove(id);
    };
    await this.live.closingWhile(id, () => this.closedLogs.excluding(id, remove));
    this.storedLimit.removed(tenant);
    this.checkpointBytes.forget(id);
    this.tenantBytes.removed(tenant, id);
    this.live.notify({ type: "deleted", id });
  }

  private async drop(id: string, session: Session): Promise<void> {
    if (this.live.find(id)?.session !== session) return;
    await this.live.take(id)?.catch(() => undefined);
    await session.close().catch(() => {});
    this.live.notify({ type: "closed", id, log: session.log });
  }

  /** Closes every live session, every harness factory, and what the store made ahead of need. */
  async close(): Promise<void> {
    const sessions = await Promise.allSettled(this.live.takeAll());
    await Promise.allSettled(
      sessions.map(async (s) => {
        if (s.status !== "fulfilled") return;
        await s.value.close();
        this.live.notify({ type: "closed", id: s.value.id, log: s.value.log });
      }),
    );
    await this.options.harnesses.close();
    await this.options.store.close?.();
  }

  private async createRecord(
    input: NewSessionInput,
    links: Pick<SessionRecord, "forked_from" | "handoff_from" | "seeded"> & { not_before?: string } = {},
    seed?: (nativeDir: string) => Promise<void>,
  ): Promise<Session> {
    const { harnesses, tools, sessionTools } = this.options;
    const linked = links.forked_from !== undefined || links.handoff_from !== undefined;
    const checks = { harnesses, tools, providers: this.providers, runsMcp: !!sessionTools };
    await refuseUnmakeable(input, linked, checks);
    const config = input.config ?? {};
    // The tenant's byte bound first: its new sessions, forks and handoffs too, are made one at a time (log-bound.ts).
    const admitted = (make: () => Promise<Session>) =>
      this.logBound.admitNew(
        input.tenant,
        () => this.storedLimit.admit(input.tenant, () => this.openLimit.admit(input.tenant, make)),
        links,
      );
    return admitted(async () => {
      const made = await createdSession(this.options.store, {
        id: input.id,
        harness: input.harness,
        config,
        ...(input.provider ? { provider: input.provider } : {}),
        ...(input.permissions ? { permissions: input.permissions } : {}),
        ...(input.client_permissions ? { client_permissions: input.client_permissions } : {}),
        ...links,
        ...(input.tenant ? { tenant: input.tenant } : {}),
        ...(input.mcp_servers ? { mcp_servers: input.mcp_servers } : {}),
        ...(input.editor_cwd ? { editor_cwd: input.editor_cwd } : {}),
        ...(input.idempotency ? { idempotency: input.idempotency } : {}),
      });
      const { record } = made;
      try {
        if (seed) await seed(this.options.store.paths(record.id).native);
        await this.closedLogs.idle(record.id);
      } catch (err) {
        await made.abandon();
        throw err;
      }
      // Registered (and announced) only once its first event and its files are durable.
      return this.live.get(record.id, () => openCreated(made, () => this.openSession(record.id, made)));
    });
  }

  /** `created`: a session createRecord just made, opened without reading its record back (and on its log). */
  private openSession(id: string, created?: CreatedSession): Promise<LiveSession> {
    const context = {
      options: this.options,
      providers: this.providers,
      redactor: this.redactor,
      keptOut: (id: string) => this.live.keepsOut(id),
      drop: (id: string, session: Session) => this.drop(id, session),
    };
    return openSession(context, id, created);
  }
}
