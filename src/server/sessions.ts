// What the daemon does with sessions, apart from HTTP: tenancy (another tenant's session is "not found"), the
// controller lease. What is live and what a new one is made of is the core's (Brain); routes and ACP call this.
import type { Brain } from "../core/brain.js";
import { BrainError } from "../core/errors.js";
import { OneAtATime } from "../core/one-at-a-time.js";
import type { ReplyBody } from "../core/request-desk.js";
import type { Session } from "../core/session.js";
import { type ProviderGrant, refuseUngrantedFork } from "../core/session-input.js";
import type {
  CheckpointView,
  ControlView,
  CreateSessionBody,
  ForkBody,
  HandoffBody,
  PromptBody,
  ProviderList,
  RebuildView,
  RestoreBody,
  SessionListQuery,
  SessionView,
} from "../protocol/api.js";
import type { SessionDefaults } from "../protocol/config.js";
import type { SessionEvent } from "../protocol/events.js";
import { SESSION_ID_PATTERN, type SessionRecord } from "../protocol/session.js";
import type { AgentCatalog } from "./agents.js";
import { answeredBy, DEFAULT_TENANT, type Principal } from "./auth/tokens.js";
import { type ControlLeases, takenForAnother } from "./control.js";
import { ApiError, inField, notFound } from "./errors.js";
import { answerInSession } from "./hitl/log-lookup.js";
import { answerRequest, IdempotentCommands, keyedAs, keyReused } from "./idempotency.js";
import { KeyedAnswers } from "./keyed-answers.js";
import { KeyedCreates, removeHalfMade } from "./keyed-creates.js";
import { KeyedDeletes } from "./keyed-deletes.js";
import { type NativeStateParts, rebuild, restore } from "./native-state.js";
import { carriedRefusal, madeFromKept, newSessionInput } from "./new-session-input.js";
import type { Page } from "./paging.js";
import { providerGrant, providerList } from "./provider-grant.js";
import { dated, type Listed, listedPage, listedView } from "./session-list.js";

export interface SessionServiceParts {
  brain: Brain;
  leases: ControlLeases;
  defaults: SessionDefaults;
  agents: AgentCatalog;
  /** How long a retry waits for the first request under its Idempotency-Key (default KEYED_WAIT_MS). */
  keyedWaitMs?: number | undefined;
}

/** Who is asking: the token's tenant and role, and the client id it gave (X-Brain-Client). */
export interface Caller extends Principal {
  client?: string;
}

const tenantOf = (owner: { tenant?: string }) => owner.tenant ?? DEFAULT_TENANT;

export class SessionService {
  private readonly commands: IdempotentCommands;
  /** Keyed takes of control, whose keys nothing durable holds, and rebuilds and restores running (./keyed-answers.ts). */
  private readonly answers: KeyedAnswers;
  /** Keyed creates, forks and handoffs: their keys are in the records of the sessions they made. */
  private readonly creates: KeyedCreates;

  private readonly deletes: KeyedDeletes;
  /** A session's deletes, forks and handoffs, one at a time: none made from it between a delete's check and removal. */
  private readonly sources = new OneAtATime();
  private readonly native: NativeStateParts;

  constructor(private readonly parts: SessionServiceParts) {
    const waitMs = parts.keyedWaitMs;
    this.commands = new IdempotentCommands(waitMs);
    this.answers = new KeyedAnswers(undefined, waitMs);
    const stored = (id: string) => parts.brain.record(id).catch(() => undefined);
    this.creates = new KeyedCreates(stored, waitMs, (id) => removeHalfMade(parts.brain, id));
    this.deletes = new KeyedDeletes(parts.brain, this.sources, waitMs);
    this.native = {
      brain: parts.brain,
      leases: parts.leases,
      answers: this.answers,
      commands: this.commands,
    };
  }

  get brain(): Brain {
    return this.parts.brain;
  }

  /** The record, if `caller` may see it; otherwise 404, exactly as for a session that does not exist. */
  async record(caller: Principal, id: string): Promise<SessionRecord> {
    const record = SESSION_ID_PATTERN.test(id)
      ? await this.parts.brain.record(id).catch(() => undefined)
      : undefined;
    if (!record || tenantOf(record) !== caller.tenant) throw notFound(`no session "${id}"`);
    return record;
  }

  /** The live session (opened now if needed: passive, no harness starts). */
  async live(caller: Principal, id: string): Promise<Session> {
    return this.attach(await this.record(caller, id));
  }

  /**
   * The live session if the daemon has it open, or one it opens because the session is not closed; undefined
   * when only its file can be read (closed, or its harness is not configured here).
   */
  async forWatching(caller: Principal, id: string): Promise<Session | undefined> {
    const record = await this.record(caller, id);
    if (!this.openSession(id) && record.status === "closed") return undefined;
    return this.attach(record).catch((err: unknown) => {
      if (err instanceof ApiError && err.code === "conflict") return undefined;
      // Another process (a `brain run`) or another cluster node writes the log: watch its stored events.
      // Or its harness cannot move here (pinned to another node), or its tenant holds as many sessions open as
      // it may (reading one needs none open): its stored events can still be read.
      const readable = ["locked", "pinned", "limit_reached"];
      if (err instanceof BrainError && readable.includes(err.code)) return undefined;
      throw err;
    });
  }

  /** The configured providers the caller may name (never their URLs, key variables or keys). */
  providers(caller: Principal): ProviderList {
    return providerList(this.parts.brain, this.parts.defaults.provider, caller);
  }

  /** The caller's sessions (oldest first, or newest), all or `limit` after `after` (./session-list.ts listedPage). */
  async list(caller: Principal, page: SessionListQuery = {}): Promise<Page<Listed>> {
    return listedPage(this.parts.brain, caller.tenant, page);
  }

  /** A listed session's view, read when the answer comes to it; as ./session-list.ts listedView says. */
  async listedView(caller: Principal, id: string): Promise<SessionView | { error: string } | undefined> {
    return listedView(this.parts.brain, id, (record) =>
      tenantOf(record) === caller.tenant ? this.viewOf(record, this.openSession(id)) : undefined,
    );
  }

  async view(caller: Principal, id: string): Promise<SessionView> {
    const record = await this.record(caller, id);
    const session = this.openSession(id);
    if (session) return dated(this.parts.brain, id, this.viewOf(record, session));
    // From the log's tail: a view never reads the whole log of a long session.
    const { lastSeq, pending } = await this.parts.brain.pending(id);
    return dated(this.parts.brain, id, { ...this.viewOf(record, undefined), last_seq: lastSeq, pending });
  }

  /**
   * GET /v1/sessions/{id}: the view with its native state's bytes on this disk (as `sessions show`); left out when
   * the count fails, which must not keep a client from the session. Lists and command answers never count it.
   */
  async viewWithNativeDisk(caller: Principal, id: string): Promise<SessionView> {
    const view = await this.view(caller, id);
    const native_disk = await this.parts.brain.nativeDisk(id).catch(() => undefined);
    return native_disk ? { ...view, native_disk } : view;
  }

  /** A session's first seq (retention may have taken its oldest) and last (its tail: compaction leaves gaps). */
  async seqBounds(id: string): Promise<{ first: number; last: number }> {
    return { first: await this.parts.brain.firstSeq(id), last: await this.parts.brain.lastSeq(id) };
  }

  /** Events after `after` of a session not open here, read through Brain (never taking its log's lock). */
  async fileEvents(id: string, after: number, limit: number): Promise<SessionEvent[]> {
    return this.parts.brain.events(id, after, limit);
  }

  /** `body.id` is the default tenant's alone: the route refuses it from any other before this. */
  async create(caller: Caller, body: CreateSessionBody, key?: string): Promise<SessionView> {
    const chosen = body.id ? { id: body.id } : {};
    const request = { tenant: caller.tenant, command: "create", key, body, ...chosen } as const;
    // Its agent and settings are resolved only when nothing was made under the key: a retry after the agent's
    // file was removed gets the session the first made.
    const id = await this.creates.run(request, async (made) => {
      const input = await newSessionInput(this.parts, caller, body, this.grant(caller));
      if (input.id && (await this.parts.brain.record(input.id).catch(() => undefined))) {
        throw new ApiError("conflict", `session "${input.id}" already exists`, "id");
      }
      return this.parts.brain.create({ ...input, ...made });
    });
    return this.view(caller, id);
  }

  /** The caller's sessions open in this process. */
  openSessions(caller: Principal): Session[] {
    return this.parts.brain
      .liveSessions()
      .filter((live) => tenantOf(live) === caller.tenant)
      .map((live) => live.session);
  }

  async prompt(
    caller: Caller,
    id: string,
    text: string,
    images?: PromptBody["images"],
    key?: string,
  ): Promise<{ turn: string; session: string }> {
    const data = { text, ...(images?.length ? { images } : {}) };
    const input = { ...(images?.length ? { images } : {}), ...(key ? { key } : {}) };
    return this.drive(caller, id, (session) => {
      const run = async () => ({ turn: (await session.prompt(text, input)).turn, session: id });
      return this.commands.run(
        session,
        key,
        keyedAs("user.prompt", data),
        () => this.parts.brain.logBound.admit(id, run),
        (earlier) => ({ turn: earlier.turn!, session: id }),
      );
    });
  }

  async steer(caller: Caller, id: string, text: string, key?: string): Promise<void> {
    await this.drive(caller, id, (session) =>
      this.commands.run(
        session,
        key,
        keyedAs("user.steer", { text }),
        () => this.parts.brain.logBound.admit(id, () => session.steer(text, key)),
        () => {},
      ),
    );
  }

  async interrupt(caller: Caller, id: string, key?: string): Promise<void> {
    await this.drive(caller, id, (session) =>
      this.commands.run(
        session,
        key,
        keyedAs("user.interrupt"),
        () => session.interrupt(key),
        () => {},
      ),
    );
  }

  /**
   * Answers a pending permission request or question by its id: the first valid answer wins, others get 409.
   * `command: false` (nui's HITL respond()) answers without taking control: the extension's own UI answering
   * its request is not a client driving the session.
   */
  async answer(
    caller: Caller,
    id: string,
    /** Several only for the questions of one request (nui's respond()), answered all or none, never keyed. */
    replies: readonly (readonly [requestId: string, body: ReplyBody])[],
    { command = true, key }: { command?: boolean; key?: string } = {},
  ): Promise<void> {
    const [requestId, body] = replies[0]!;
    const from = { ...(key ? { key } : {}), by: answeredBy(caller) };
    const reply = (session: Session) =>
      this.commands.run(
        session,
        key,
        answerRequest(requestId, body),
        () => answerInSession(session, replies, from),
        (earlier) => {
          const first = (earlier.data as { id: string }).id;
          const why = `its first request answered request "${first}", not "${requestId}"`;
          if (first !== requestId) throw keyReused(key!, why, "answer");
        },
      );
    await (command ? this.drive(caller, id, reply) : reply(await this.live(caller, id)));
  }

  async checkpoint(caller: Caller, id: string, key?: string): Promise<CheckpointView> {
    return this.drive(caller, id, (session) =>
      this.commands.run(
        session,
        key,
        keyedAs("checkpoint.created"),
        async () => {
          const manifest = await this.parts.brain.logBound.admitCheckpoint(id, () => session.checkpoint(key));
          const files = manifest.files.map(({ path, size, append_only }) => ({ path, size, append_only }));
          return { id: manifest.id, files };
        },
        (earlier) => {
          const data = earlier.data as CheckpointView;
          return { id: data.id, files: data.files };
        },
      ),
    );
  }

  async fork(caller: Caller, id: string, body: ForkBody, key?: string): Promise<SessionView> {
    const request = { tenant: caller.tenant, command: "fork", source: id, key, body } as const;
    // The source is looked at only when nothing was made under the key: a retry after its delete gets the fork.
    const made = await this.creates.run(request, (made) =>
      madeFromKept(this.sources, this.parts.brain, id, async () => {
        refuseUngrantedFork(id, (await this.record(caller, id)).provider, this.grant(caller));
        return this.parts.brain
          .fork(id, body.checkpoint, made)
          .catch((err) => Promise.reject(inField(err, "checkpoint")));
      }),
    );
    return this.view(caller, made);
  }

  /** A new session on another harness, continuing this one's conversation; the caller's tenant owns it too. */
  async handoff(caller: Caller, id: string, body: HandoffBody, key?: string): Promise<SessionView> {
    const limits = { defaults: this.parts.defaults, grant: this.grant(caller) };
    const request = { tenant: caller.tenant, command: "handoff", source: id, key, body } as const;
    const made = await this.creates.run(request, (made) =>
      madeFromKept(this.sources, this.parts.brain, id, async () => {
        await this.record(caller, id);
        return this.parts.brain
          .handoff(id, { ...body, made }, limits)
          .catch((err) => Promise.reject(carriedRefusal(err, id, body.to)));
      }),
    );
    return this.view(caller, made);
  }

  /** Rewrites the session's native state from its log: ./native-state.ts. */
  async rebuild(caller: Caller, id: string, key?: string): Promise<RebuildView> {
    await this.record(caller, id);
    return rebuild(this.native, caller, id, key);
  }

  /** Writes a checkpoint's native files into a directory on this machine: ./native-state.ts. */
  async restore(caller: Caller, id: string, body: RestoreBody, key?: string): Promise<string> {
    await this.record(caller, id);
    return restore(this.native, caller, id, body, key);
  }

  /** Releases the harness; the session stays, and a later prompt reopens it. Closing twice is not an error. */
  async close(caller: Caller, id: string): Promise<SessionView> {
    const record = await this.record(caller, id);
    if (record.status !== "closed" || this.openSession(id)) {
      await this.parts.leases.driving(id, caller.client, () => this.parts.brain.closeSession(id));
      this.parts.leases.release(id);
    }
    return this.view(caller, id);
  }

  async delete(caller: Caller, id: string, key?: string, force = false): Promise<void> {
    const remove = async () => {
      await this.parts.leases.driving(id, caller.client, () => this.parts.brain.delete(id));
      this.parts.leases.release(id);
    };
    await this.deletes.run(caller.tenant, id, key, remove, force);
  }

  async takeControl(caller: Caller, id: string, client: string, key?: string): Promise<ControlView> {
    await this.record(caller, id);
    // Taken again, a retry would take control back from a client that took it since, and name that one as previous.
    const slot = { tenant: caller.tenant, session: id, route: "control", key };
    const previous = this.answers.once(
      slot,
      client,
      () => this.parts.leases.take(id, client),
      (first) => takenForAnother(slot, first),
    );
    return { controller: client, ...(previous ? { previous } : {}) };
  }

  /** Runs `command` on the live session as the caller driving it: control is claimed only if it is taken. */
  private async drive<T>(caller: Caller, id: string, command: (session: Session) => Promise<T>): Promise<T> {
    const record = await this.record(caller, id);
    // A command that comes while the session closes is taken once the close is done (a prompt reopens the session).
    await this.parts.brain.closeDone(id);
    const session = await this.attach(record);
    return this.parts.leases.driving(id, caller.client, () => command(session));
  }

  /** The session if it is open in this process. */
  private openSession(id: string): Session | undefined {
    return this.parts.brain.liveSession(id)?.session;
  }

  private async attach(record: SessionRecord): Promise<Session> {
    const names = this.parts.brain.harnesses.names();
    if (!this.openSession(record.id) && !names.includes(record.harness)) {
      // Made on a harness this daemon's config no longer offers: its log can be read, it cannot run.
      throw new ApiError(
        "conflict",
        `session ${record.id} runs on harness "${record.harness}", which this daemon does not offer (it has: ${names.join(", ") || "none"}); add it to brain.config.json`,
      );
    }
    return this.parts.brain.session(record.id);
  }

  private viewOf(stored: SessionRecord, session: Session | undefined): SessionView {
    const record = this.parts.brain.shownRecord(stored);
    const controller = this.parts.leases.holder(record.id);
    const view: SessionView = { ...record, ...(controller ? { controller } : {}) };
    // Which variable holds a key is the host's business: a view shows inline settings without it.
    if (typeof record.provider === "object" && record.provider.api_key_env) {
      const { api_key_env: _, ...shown } = record.provider;
      view.provider = shown;
    }
    if (!session) return view;
    const turn = session.activeTurn;
    const live = { last_seq: session.log.lastSeq, pending: session.pendingRequests() };
    return { ...view, ...(turn ? { active_turn: turn } : {}), ...live };
  }

  /** The providers the caller may name in what it asks for. */
  private grant(caller: Caller): ProviderGrant {
    return providerGrant(this.parts.brain, caller);
  }
}
