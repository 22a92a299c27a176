// A session the host has just made in its store, before it is opened: with a store that can (createOpen), its log
// is open already and its files are still being made durable while the host writes its first event.
import type { SessionRecord } from "../protocol/session.js";
import { SessionError } from "./errors.js";
import type { EventLog } from "./event-log.js";
import type { LiveSession } from "./live-sessions.js";
import { refuseUnmatchableRules } from "./permissions.js";
import type { Providers } from "./providers.js";
import type { HarnessRegistry } from "./registry.js";
import type { NewSessionInput } from "./session-input.js";
import type { NewSessionRecord, SessionStore } from "./store.js";
import { refuseShadowingTools, type ToolCatalog } from "./tools.js";

export interface CreatedSession {
  record: SessionRecord;
  /** The session's log, taken with its creation (stores with createOpen); else the host opens it. */
  log?: EventLog;
  /** Settles once the record and the log's file are durable: the session is acknowledged only after. */
  durable: Promise<void>;
  /**
   * For a session that will not be opened after all (its seeding or its first open failed): its log let go and
   * the session removed, so that no half-made session is listed or opened later.
   */
  abandon(): Promise<void>;
}

/**
 * What fails a new session before anything is written: an unknown harness or tool, an unknown provider or a
 * missing key, MCP servers on a host that runs none, a tool hiding an MCP server's, a
 * permission rule no MCP tool's session name can match. `linked`: a fork or handoff,
 * which carries a recorded session's tools and rules its caller cannot rewrite (not refused for those).
 */
export async function refuseUnmakeable(
  input: NewSessionInput,
  linked: boolean,
  host: { harnesses: HarnessRegistry; tools: ToolCatalog; providers: Providers; runsMcp: boolean },
): Promise<void> {
  const { harnesses, tools, providers } = host;
  harnesses.get(input.harness);
  const config = input.config ?? {};
  await tools.bind(config.tools ?? []);
  const servers = Object.keys(input.mcp_servers ?? {});
  if (!linked) {
    refuseShadowingTools(config.tools ?? [], servers);
    refuseUnmatchableRules(input.permissions, servers, "permissions");
    refuseUnmatchableRules(input.client_permissions, servers, "client_permissions");
  }
  const choice = input.provider;
  if (typeof choice === "string") providers.credentials(providers.settings(choice), choice);
  else providers.credentials(choice);
  if (input.mcp_servers && Object.keys(input.mcp_servers).length > 0 && !host.runsMcp) {
    throw new SessionError(
      "bad_request",
      "this host runs no MCP servers: remove mcp_servers from the session",
    );
  }
}

export async function createdSession(store: SessionStore, input: NewSessionRecord): Promise<CreatedSession> {
  if (!store.createOpen) {
    const record = await store.create(input);
    return { record, durable: Promise.resolve(), abandon: () => removeQuietly(store, record.id) };
  }
  const { record, log, durable } = await store.createOpen(input);
  // Awaited by whoever opens the session; failing before anyone awaits it is not an unhandled rejection.
  durable.catch(() => {});
  const abandon = async () => {
    await durable.catch(() => {});
    await log.close().catch(() => {});
    await removeQuietly(store, record.id);
  };
  return { record, log, durable, abandon };
}

/**
 * Opens a session just made (`open`) and writes its first event, `session.opened`. Resolves once that event and
 * the session's files are durable; until then nobody is told of the session. A failure closes what was opened.
 */
export async function openCreated(
  made: CreatedSession,
  open: () => Promise<LiveSession>,
): Promise<LiveSession> {
  let live: LiveSession;
  try {
    live = await open();
  } catch (err) {
    await made.abandon();
    throw err;
  }
  const { harness, config, forked_from, handoff_from } = made.record;
  const data = {
    harness,
    config,
    ...(forked_from ? { forked_from } : {}),
    ...(handoff_from ? { handoff_from } : {}),
  };
  const [event, files] = await Promise.allSettled([
    live.session.log.append([{ type: "session.opened", data }]),
    made.durable,
  ]);
  // The files' failure first: it is the cause (the store then closed the log under the append).
  const failed = files.status === "rejected" ? files : event.status === "rejected" ? event : undefined;
  if (failed) {
    await live.session.close().catch(() => {});
    throw failed.reason;
  }
  return live;
}

/** The caller reports why the session was given up; a removal that fails too must not hide that. */
async function removeQuietly(store: SessionStore, id: string): Promise<void> {
  await store.remove(id).catch(() => {});
}
