// Opening a stored session: its tools, provider, secrets and log bound into a live Session (Brain.openSession).

import type { ProviderCredentials } from "../protocol/runner.js";
import type { SessionRecord } from "../protocol/session.js";
import type { BrainOptions } from "./brain-options.js";
import { CheckpointStore, type Checkpoints } from "./checkpoints/index.js";
import { historyCheck } from "./conversation-chain.js";
import type { CreatedSession } from "./created-session.js";
import { sessionSecrets } from "./credentials.js";
import { SessionError } from "./errors.js";
import { conversationEvents, summaryOption } from "./handoff.js";
import type { LiveSession } from "./live-sessions.js";
import { PermissionRules } from "./permissions.js";
import { pinIfUnmovable, refusePinnedElsewhere } from "./pinning.js";
import type { Providers } from "./providers.js";
import type { Redactor } from "./redact.js";
import { redactError } from "./redact-error.js";
import { redactingLog } from "./redacting-log.js";
import { settleRestoreMarks } from "./restore-marks.js";
import { Session } from "./session.js";

/** What opening a session needs of the Brain that owns it. */
export interface OpenContext {
  options: BrainOptions;
  providers: Providers;
  /** The host's secrets: the session's own are added to them. */
  redactor: Redactor;
  /** Why a prompt or checkpoint of `id` must wait now (a fork or rebuild holds it), if it must. */
  keptOut: (id: string) => string | undefined;
  /** Lets the live session go when another node takes its log. */
  drop: (id: string, session: Session) => Promise<void>;
}

/** The checkpoints of session `id`: the store's own kind, else files beside its log. */
export function checkpointsOf(options: BrainOptions, id: string): Checkpoints {
  const { store } = options;
  return store.checkpoints?.(id) ?? new CheckpointStore(store.paths(id).checkpoints);
}

export async function storedRecord(options: BrainOptions, id: string) {
  const record = await options.store.get(id);
  if (!record) throw new SessionError("not_found", `no session "${id}"`);
  return record;
}

/** `created`: a session createRecord just made, opened without reading its record back (and on its log). */
export async function openSession(
  context: OpenContext,
  id: string,
  created?: CreatedSession,
): Promise<LiveSession> {
  const { options, providers } = context;
  const record = created?.record ?? (await storedRecord(options, id));
  const settings =
    typeof record.provider === "string" ? providers.settings(record.provider) : record.provider;
  const provider = providers.credentials(
    settings,
    typeof record.provider === "string" ? record.provider : undefined,
  );
  const redactor = context.redactor.with(
    sessionSecrets(record, settings, provider, options.env ?? process.env),
  );
  // An error from here on reaches callers that know only the host's secrets (`brain run`, the daemon's create
  // and HITL routes): one quoting the session's record (a literal MCP header) is redacted with its own.
  try {
    const reasoning = settings?.reasoning;
    const live = await openLive(context, id, { record, provider, reasoning, redactor }, created);
    // Marks a killed keyed restore left here (./restore-marks.ts); one that cannot be settled now waits for the
    // next open, never failing this one.
    if (!created) await settleRestoreMarks(options.store, checkpointsOf(options, id), record).catch(() => {});
    return live;
  } catch (err) {
    throw redactError(err, (text) => redactor.redact(text));
  }
}

async function openLive(
  { options, keptOut, drop }: OpenContext,
  id: string,
  {
    record,
    provider,
    reasoning,
    redactor,
  }: {
    record: SessionRecord;
    provider: ProviderCredentials;
    reasoning?: boolean | undefined;
    redactor: Redactor;
  },
  created: CreatedSession | undefined,
): Promise<LiveSession> {
  const paths = options.store.paths(id);
  const tools = await options.tools.bind(record.config.tools ?? []);
  const services = options.sessionTools?.(record);
  refusePinnedElsewhere(options.store, record);
  const raw = created?.log ?? (await options.store.openLog(id));
  // Every made session's log starts with session.opened, durable before anyone is told of the session; a log
  // holding nothing (none dropped by retention) is one whose maker died first (a kill mid-create or mid-fork,
  // its seeding half done). We hold its lock, so no live maker remains: removed, as a failed make removes its own.
  if (!created && raw.lastSeq === 0 && (raw.firstSeq ?? 1) <= 1) {
    await raw.close().catch(() => {});
    await options.store.remove(id);
    throw new SessionError(
      "not_found",
      `no session "${id}": the host stopped while making it, before its first event (session.opened) was written, so it was never made and is now removed: create, fork or hand it off again`,
    );
  }
  const log = redactingLog(raw, redactor);
  try {
    await pinIfUnmovable(options.store, options.harnesses.get(record.harness), record);
    if (record.status === "closed") await options.store.update(id, { status: "open" });
    const session = await Session.open({
      id,
      harnessName: record.harness,
      config: record.config,
      nativeDir: paths.native,
      log,
      factory: options.harnesses.get(record.harness),
      tools,
      ...(services ? { services } : {}),
      ...(record.mcp_servers ? { mcpServers: record.mcp_servers } : {}),
      provider,
      ...(reasoning === undefined ? {} : { providerReasoning: reasoning }),
      ...(record.provider === undefined && options.providerEnv ? { providerEnv: options.providerEnv } : {}),
      checkpoints: checkpointsOf(options, id),
      redactor,
      permissions: new PermissionRules(record.permissions, record.client_permissions),
      ...(options.store.checkpointEveryTurn ? { checkpointAfterTurn: true } : {}),
      keptOut: () => keptOut(id),
      history: historyCheck(options.store, record, log, created !== undefined),
      ...summaryOption(record, () => conversationEvents(options.store, record, [])),
    });
    // Another node owns the session now: stop its harness here and let go (the log refuses writes already).
    // A log fenced while the session was opening calls this at once, before the session is live, so drop
    // would find nothing to let go: the open fails instead, or a dead session would keep its tenant's slot
    // and hold back the commands other nodes would forward to the new owner.
    let fenced: Error | undefined;
    raw.onRevoked?.((err) => {
      fenced = err;
      void drop(id, session);
    });
    if (fenced) {
      await session.close().catch(() => {});
      throw fenced;
    }
    return { session, ...(record.tenant ? { tenant: record.tenant } : {}) };
  } catch (err) {
    // Left open, the log would keep its lock: no later open in this process or any other could take it.
    await log.close().catch(() => {});
    throw err;
  }
}
