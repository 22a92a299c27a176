// What a Session is made of (the host fills these in when it opens one), what a turn's start and end say, and
// the check a harness passes before a session uses it.
import type { McpServers } from "../protocol/config.js";
import type { ErrorInfo, SessionEvent, TurnStatus } from "../protocol/events.js";
import type { ProviderCredentials, SessionConfig } from "../protocol/runner.js";
import { Backlog } from "./backlog.js";
import type { Checkpoints } from "./checkpoints/index.js";
import type { EventLog } from "./event-log.js";
import {
  type ExpectedHistory,
  type Harness,
  HarnessError,
  type HarnessFactory,
  type HarnessOptions,
} from "./harness.js";
import type { PermissionRules } from "./permissions.js";
import type { Redactor, Secret } from "./redact.js";
import { redactError } from "./redact-error.js";
import type { BoundTools, SessionToolServices } from "./tools.js";

export interface SessionParts {
  id: string;
  harnessName: string;
  config: SessionConfig;
  nativeDir: string;
  log: EventLog;
  factory: HarnessFactory;
  tools: BoundTools;
  /** The session's own tool services (its MCP servers): started with its harness, stopped when it closes. */
  services?: SessionToolServices;
  /** The session's MCP servers as configured, passed to harnesses whose agents start them themselves. */
  mcpServers?: McpServers;
  provider: ProviderCredentials;
  /** HarnessOptions.providerReasoning: the configured provider's `reasoning`, when it says. */
  providerReasoning?: boolean;
  /** HarnessOptions.providerEnv: set only for a session that names no provider, on a host that allows it. */
  providerEnv?: NodeJS.ProcessEnv;
  checkpoints: Checkpoints;
  /**
   * What the session's log redacts (the host's secrets and the session's, and those its harness adds once it runs):
   * the same redactor as its log's. No checkpoint may hold one either.
   */
  redactor: Redactor;
  permissions: PermissionRules;
  /**
   * Checkpoint the native state after every completed turn (cluster mode: no settled turn's history may live
   * on one machine only). A checkpoint that fails is a warning; the turn stands.
   */
  checkpointAfterTurn?: boolean;
  /**
   * What the log says the harness's native state holds (none before the first answered turn). `ahead` reads it
   * before a prompt is taken (conversation-chain.ts historyCheck).
   */
  history?: (() => Promise<ExpectedHistory | undefined>) & { ahead?: () => Promise<void> };
  /** Why no turn may start nor checkpoint be taken now (a rebuild under way), checked by BetweenTurns. */
  keptOut?: () => string | undefined;
  /** A session seeded with a summary: what its prompt becomes until a turn is answered (the history first). */
  preamble?: (text: string, own: SessionEvent[]) => Promise<string>;
}

export interface TurnOutcome {
  turn: string;
  status: TurnStatus;
  error?: ErrorInfo;
}

export interface StartedTurn {
  turn: string;
  /**
   * Resolves once `turn.settled` is durable, or, when the log cannot take it (a full disk), with the failure
   * it will say once it can (the session starts no other turn before). Never rejects.
   */
  settled: Promise<TurnOutcome>;
}

/** What a session's harness is opened with that comes from its parts alone. */
export function partsForHarness(parts: SessionParts) {
  return {
    sessionId: parts.id,
    dir: parts.nativeDir,
    config: parts.config,
    ...(parts.mcpServers ? { mcpServers: parts.mcpServers } : {}),
    provider: parts.provider,
    ...(parts.providerReasoning === undefined ? {} : { providerReasoning: parts.providerReasoning }),
    ...(parts.providerEnv ? { providerEnv: parts.providerEnv } : {}),
    policy: (tool: string) => parts.permissions.decide(tool),
    secret: (secret: Secret) => parts.redactor.add([secret]),
    redact: <T>(value: T): T => parts.redactor.redactDeep(value),
    ...(parts.log.pending ? { backlog: new Backlog(parts.log.pending) } : {}),
  };
}

/** What a session's harness is opened with beyond its parts: its tools and its ways back to the session. */
export type HarnessLinks = Omit<HarnessOptions, keyof ReturnType<typeof partsForHarness>>;

/**
 * Opens the session's harness. Its failure reaches callers that know only the host's secrets (`brain run`, the
 * daemon's create route): one quoting what the harness was given (an MCP server's literal header, an agent's
 * env token) is redacted with the session's own.
 */
export async function openHarness(parts: SessionParts, links: HarnessLinks): Promise<Harness> {
  try {
    return await parts.factory.open({ ...partsForHarness(parts), ...links });
  } catch (err) {
    throw redactError(err, (text) => parts.redactor.redact(text));
  }
}

/** A harness that opened (or failed to) after its session's close. */
export const closedWhileOpening = (id: string) =>
  new HarnessError("brain_error", `session ${id} was closed while its harness started`);

/** A harness that does not hold the conversation the log says fails loudly: never a silent fresh start. */
export async function verifyHistory(harness: Harness, parts: SessionParts): Promise<void> {
  let missing: string | undefined;
  try {
    const expected = harness.verify && (await parts.history?.());
    missing = expected ? await harness.verify!(expected) : undefined;
  } catch (err) {
    // A check that failed (an agent's /verify answered an error) leaves the harness unopened, as a failed one
    // does: nothing else would close it, and its agent's connections (a container, for docker) would stay.
    await harness.close().catch(() => {});
    throw err;
  }
  if (!missing) return;
  await harness.close().catch(() => {});
  throw new HarnessError(
    "brain_error",
    `${parts.harnessName}: ${missing}. Brain will not start the model without its history: \`brain sessions rebuild ${parts.id}\` rebuilds the native state from Brain's log`,
  );
}

/**
 * Before a prompt is taken: a harness that opens for its turn first checks its history in the log, so that is read
 * now (and kept for the check). A log that cannot be read (a line damaged in the middle) refuses the prompt, naming
 * the session, the file and the byte, instead of failing the turn after it was taken.
 */
export async function historyAhead(parts: SessionParts, harness: Harness | Promise<Harness> | undefined) {
  if (!harness) await parts.history?.ahead?.();
}
