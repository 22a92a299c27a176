// What a new session is made of, resolved in one place for every edge (`brain run`, REST, ACP through REST):
// the host's defaults, then an agent definition, then what this one call says, each layer over the last. A network
// caller's permission policy is the exception: it is kept beside the operator's and can only tighten it.
import type { McpServers, ProviderChoice, SessionDefaults } from "../protocol/config.js";
import type { PermissionPolicy } from "../protocol/permissions.js";
import type { SessionConfig } from "../protocol/runner.js";
import type { SessionRecord } from "../protocol/session.js";
import { SessionError } from "./errors.js";
import type { HarnessFactory } from "./harness.js";

export interface NewSessionInput {
  harness: string;
  config?: SessionConfig;
  /** A configured provider's name, or inline settings (the operator's own CLI and agent definitions). */
  provider?: ProviderChoice;
  /** The operator's policy (the agent's, the defaults', or the operator's own CLI's choice). */
  permissions?: PermissionPolicy;
  /** A network caller's own policy: it only tightens `permissions`, tool by tool (see PermissionRules). */
  client_permissions?: PermissionPolicy;
  id?: string;
  /** The tenant that owns the session (daemon with tenant tokens); absent means "default". */
  tenant?: string;
  /** MCP servers started for this session; their tools are bound to it as `server__tool`. */
  mcp_servers?: McpServers;
  /** The ACP editor's working directory, recorded for `brain acp` (session/list, session/load). */
  editor_cwd?: string;
  /** The Idempotency-Key of the request that made the session, kept in its record (SessionRecord). */
  idempotency?: SessionRecord["idempotency"];
}

/** One layer of a new session's settings; `config` merges key by key over the layers below. */
export type SessionLayer = Partial<
  Omit<NewSessionInput, "id" | "tenant" | "client_permissions" | "editor_cwd" | "idempotency">
>;

/** The providers a remote caller may name: only configured ones, by name, and only those its token lists. */
export interface ProviderGrant {
  /** The configured providers this caller may use. */
  allowed: string[];
  /** The caller's token lists its providers: a default outside the list is not handed to it. */
  restricted: boolean;
  /** Where the caller can list them (said in refusals). */
  listedAt: string;
}

export interface InputLayers {
  defaults?: SessionDefaults;
  agent?: SessionLayer;
  call?: SessionLayer & Pick<NewSessionInput, "id" | "tenant" | "editor_cwd" | "idempotency">;
  /** Absent for the operator's own CLI, which may also give inline provider settings. */
  grant?: ProviderGrant;
  /**
   * The call's permissions only tighten the operator's, as a network caller's always do (with `grant`); a
   * handoff says so for the client policy it carries over, whoever asks for it.
   */
  callPermissionsTighten?: boolean;
}

/** When nothing names a harness: the offline echo runner, if the host has it. */
export const FALLBACK_HARNESS = "echo";

/**
 * The new session's input; `harnesses` are the host's, `factory` gives each one's `clientOptions` (the
 * `config.options` keys a network caller may set) and why the others are the operator's. A mistake names the
 * field and what it may be.
 */
export function resolveSessionInput(
  layers: InputLayers,
  harnesses: string[],
  factory: (harness: string) => ClientOptionRules | undefined = () => undefined,
): NewSessionInput {
  const {
    harness: defaultHarness,
    provider: defaultProvider,
    permissions,
    mcp_servers,
    ...config
  } = layers.defaults ?? {};
  const defaults: SessionLayer = { config, provider: defaultProvider, permissions, mcp_servers };
  const { agent = {}, call = {} } = layers;
  const harness =
    call.harness ??
    agent.harness ??
    defaultHarness ??
    (harnesses.includes(FALLBACK_HARNESS) ? FALLBACK_HARNESS : undefined);
  if (!harness) {
    throw new SessionError(
      "bad_request",
      `field "harness": required (one of: ${harnesses.join(", ")})`,
      "harness",
    );
  }
  if (!harnesses.includes(harness)) {
    // Named by the operator's defaults, the mistake is in the config, not in what the caller sent.
    const where = (call.harness ?? agent.harness) ? "" : ` (set by the config's defaults.harness)`;
    throw new SessionError(
      "bad_request",
      `field "harness": unknown harness "${harness}"${where}; known harnesses: ${harnesses.join(", ") || "(none)"}`,
      "harness",
    );
  }
  if (layers.grant) {
    checkClientOptions(call.config?.options, harness, factory(harness));
    checkToolMode(call.config?.tool_mode, agent.config?.tool_mode ?? defaults.config?.tool_mode);
  }
  const provider = providerFor(call.provider, agent.provider ?? defaults.provider, layers.grant);
  const policy = permissionLayers(
    call.permissions,
    agent.permissions ?? defaults.permissions,
    layers.grant !== undefined || layers.callPermissionsTighten === true,
  );
  const servers = call.mcp_servers ?? agent.mcp_servers ?? defaults.mcp_servers;
  // Options merge key by key too: a caller tuning one option keeps the agent's image, directory and the rest.
  const options = { ...defaults.config?.options, ...agent.config?.options, ...call.config?.options };
  return {
    harness,
    config: {
      ...defaults.config,
      ...agent.config,
      ...call.config,
      ...(Object.keys(options).length > 0 ? { options } : {}),
    },
    ...(provider ? { provider } : {}),
    ...policy,
    ...(servers ? { mcp_servers: servers } : {}),
    ...(call.id ? { id: call.id } : {}),
    ...(call.tenant ? { tenant: call.tenant } : {}),
    ...(call.editor_cwd ? { editor_cwd: call.editor_cwd } : {}),
    ...(call.idempotency ? { idempotency: call.idempotency } : {}),
  };
}

/**
 * A network caller sets only the options its harness lets clients set. The others (an image, a URL, a working
 * directory, flags, environment) reach past the session into the host, so only the operator sets them.
 */
function checkClientOptions(
  options: Record<string, unknown> | undefined,
  harness: string,
  rules: ClientOptionRules | undefined,
): void {
  const allowed = rules?.clientOptions;
  const operators = rules?.operatorOptions ?? {};
  if (!options) return;
  const may = (key: string) => !(key in operators) && (allowed === "any" || allowed?.includes(key));
  const key = Object.keys(options).find((key) => !may(key));
  if (key === undefined) return;
  const which =
    allowed === "any"
      ? `clients may set any other`
      : allowed?.length
        ? `clients may set: ${allowed.join(", ")}`
        : "clients may set none";
  const why = operators[key];
  throw new SessionError(
    "bad_request",
    `field "config.options.${key}": set by the operator only on harness "${harness}"${why ? `, as ${why}` : ""} (${which}); name an agent definition that sets it (GET /v1/agents) or ask the operator to add one`,
    `config.options.${key}`,
  );
}

/** What a harness says of the options network callers may set (HarnessFactory). */
export type ClientOptionRules = Pick<HarnessFactory, "clientOptions" | "operatorOptions">;

/** A network caller may isolate a session further, never undo the operator's `bound` (a CLI's own shell back). */
function checkToolMode(
  asked: "native" | "bound" | undefined,
  operator: "native" | "bound" | undefined,
): void {
  if (asked !== "native" || operator !== "bound") return;
  throw new SessionError(
    "bad_request",
    `field "config.tool_mode": "native" is set by the operator only; this agent runs in "bound" mode (only Brain's bound tools), leave tool_mode out or ask the operator for an agent definition in "native" mode`,
    "config.tool_mode",
  );
}

/**
 * The operator's own CLI chooses the policy outright. A network caller chooses one too (the web UI offers it),
 * but it may only make the operator's stricter, never looser, as with the tool mode: both are kept, and each
 * tool gets the stricter verdict of the two.
 */
function permissionLayers(
  called: PermissionPolicy | undefined,
  operator: PermissionPolicy | undefined,
  tightenOnly: boolean,
): Pick<NewSessionInput, "permissions" | "client_permissions"> {
  const chosen = tightenOnly ? operator : (called ?? operator);
  return {
    ...(chosen ? { permissions: chosen } : {}),
    ...(tightenOnly && called ? { client_permissions: called } : {}),
  };
}

/**
 * Refuses a fork of session `id` by a caller whose `grant` does not cover the provider the fork keeps: the check
 * (providerFor) a handoff's provider passes. A token limited to some providers could otherwise fork a session its
 * tenant made with another token onto another provider, inline settings, or none (a harness then reaching for the
 * host's own keys).
 */
export function refuseUngrantedFork(
  id: string,
  provider: ProviderChoice | undefined,
  grant: ProviderGrant,
): void {
  try {
    const inline = typeof provider === "object" ? provider : undefined;
    providerFor(typeof provider === "string" ? provider : undefined, inline, grant);
  } catch {
    const runsOn =
      typeof provider === "string"
        ? `provider "${provider}"`
        : provider
          ? "inline provider settings"
          : "no provider";
    throw new SessionError(
      "bad_request",
      `session ${id} runs on ${runsOn}, which its fork would keep, and this token may use: ${grant.allowed.join(", ") || "no provider"} (${grant.listedAt}); fork it with a token that may use its provider, or create a session on one of these`,
    );
  }
}

/**
 * The provider of a new session: the one the call names (if granted), else the agent's or the defaults'.
 * Whatever the host's environment holds, a refusal reads the same (no variable is named).
 */
function providerFor(
  named: ProviderChoice | undefined,
  fallback: ProviderChoice | undefined,
  grant: ProviderGrant | undefined,
): ProviderChoice | undefined {
  if (!grant) return named ?? fallback;
  const refuse = (what: string) =>
    new SessionError(
      "bad_request",
      `${what}; this token may use: ${grant.allowed.join(", ") || "no provider"} (${grant.listedAt})`,
      "provider",
    );
  if (named !== undefined) {
    if (typeof named !== "string" || !grant.allowed.includes(named))
      throw refuse(
        `field "provider": unknown or not allowed provider "${typeof named === "string" ? named : "(inline settings)"}"`,
      );
    return named;
  }
  if (!grant.restricted) return fallback;
  // A restricted token's sessions always have one of its providers: with none, a harness could reach for the
  // host's own keys. It gets the default only when that is one of them.
  if (typeof fallback === "string" && grant.allowed.includes(fallback)) return fallback;
  throw refuse(
    fallback === undefined
      ? `field "provider": required for this token (this host has no default provider); name one in "provider"`
      : `field "provider": required for this token (the default provider is not one it may use)`,
  );
}
