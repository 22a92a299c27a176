// brain.config.json: the runner harnesses (seed A's "harnesses" block) and the defaults of new sessions.
import { z } from "zod";
import { MAX_TIMER_MS, PermissionPolicy } from "./permissions.js";
import { SessionConfig } from "./runner.js";

export const HarnessEntry = z.strictObject({
  /** The runner's command line: an array, or a string split on spaces (quotes group words). */
  command: z.union([
    // A blank one split to no program at all, and the first session failed on a TypeError naming nothing.
    z.string().regex(/\S/, 'names no program: give the runner\'s command line, such as "node runner.js"'),
    z
      .array(z.string())
      .min(1)
      .refine((words) => /\S/.test(words[0]!), {
        message:
          'its first word names no program: give the runner\'s program first, such as ["node", "runner.js"]',
      }),
  ]),
  /** Variables added to the runner's minimal environment. Never put provider keys here. */
  env: z.record(z.string(), z.string()).optional(),
  /** One process serves every session of this harness, one attachment each. */
  shared: z.boolean().optional(),
  steering: z.boolean().optional(),
  /** false: the runner keeps state outside its native dir; in cluster mode its sessions stay on one node. */
  movable: z.boolean().optional(),
  /**
   * false: the runner keeps no conversation Brain can find in its native dir (none at all, or stored where Brain
   * cannot read it), so a reopened session is not checked for lost history.
   */
  verify_history: z.boolean().optional(),
  /**
   * false: the runner calls no model provider, so it may run in a container without network and no way to one
   * (a dev container's network: "none" refuses a runner that needs a provider and has none it can reach).
   */
  needs_provider: z.boolean().optional(),
});

/** Where the model is. The key itself is read from the environment variable `api_key_env`, never stored. */
export const ProviderSettings = z.strictObject({
  base_url: z.string().optional(),
  api: z.string().optional(),
  api_key_env: z.string().optional(),
  /**
   * The api harness's `options.reasoning` for every session on this provider (an operator's custom OpenAI reasoning
   * model, say); a session's own options.reasoning wins. Other harnesses ignore it.
   */
  reasoning: z.boolean().optional(),
});

/**
 * A base URL's user name and password would be quoted wherever the URL is (a provider's error, a CLI's warning,
 * a session's view of its inline provider) and no redactor knows them; fetch refuses such a URL anyway.
 */
export function urlHoldsCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== "" || parsed.password !== "";
  } catch {
    return false;
  }
}

const URL_CREDENTIALS =
  "holds a user name or password, which Brain would show wherever it shows the URL: give the URL without them, and the provider's key in the variable api_key_env names";

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Never quotes the value: a key pasted here by mistake would be in the message (and in a client's error body).
const KEY_ENV_NAME =
  "is not a variable name: give the name of the environment variable that holds the key (letters, digits and '_', e.g. OPENAI_API_KEY), not the key itself";

/** A provider the operator configured (brain.config.json `providers`), chosen by name: what API clients send. */
export const PROVIDER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const ProviderName = z
  .string()
  .regex(PROVIDER_NAME, "a provider name is 1 to 64 letters, digits, '_', '.' or '-'");

/**
 * A session's provider: the name of a configured provider, or settings inline. Only the operator writes inline
 * settings (the local CLI, agent definitions, `defaults.provider`); a daemon's clients may only name one.
 */
export const ProviderChoice = z.union([ProviderName, ProviderSettings]);

/** A timeout in ms, refused past what a timer holds (it would fire at once); `fallback` is the default's text. */
const timerMs = (fallback: string) =>
  z
    .number()
    .int()
    .positive()
    .max(MAX_TIMER_MS, {
      message: `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest a timer can wait); leave it out for the default of ${fallback}`,
    });

/**
 * One MCP server of a session, in the shape of nui's `aiAssets.mcpServers` (and of `.mcp.json`): `command` (with
 * `args`, `env`, `cwd`) for a server on stdio, or `url` (with `headers`) for one over streamable HTTP. In `env`,
 * `headers`, `args` and `url`, `${VAR}` is replaced by the host's environment variable VAR when the server starts,
 * so secrets stay out of session records.
 */
export const McpServer = z
  .strictObject({
    /** How to reach it; by default stdio with a command, streamable HTTP with a url. "sse" is MCP's older HTTP transport. */
    type: z.enum(["stdio", "http", "streamable-http", "sse"]).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    /** Relative to the directory of brain.config.json (the host's working dir without one). */
    cwd: z.string().optional(),
    url: z.string().url().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** Offer only these of the server's tools (by the server's own names). */
    tools: z.array(z.string()).optional(),
    startup_timeout_ms: timerMs("30000").optional(),
    /** A call's deadline; a progress report from the tool starts it afresh. */
    call_timeout_ms: timerMs("120000").optional(),
    /** A call's deadline whatever progress it reports: a tool that reports forever still ends. */
    call_total_timeout_ms: timerMs("3600000").optional(),
  })
  .superRefine((server, ctx) => {
    const stdio = server.command !== undefined;
    const http = server.url !== undefined;
    if (stdio === http) {
      ctx.addIssue({
        code: "custom",
        message: "give either command (a stdio server) or url (streamable HTTP)",
      });
      return;
    }
    const wrong = stdio ? ["url", "headers"] : ["command", "args", "env", "cwd"];
    for (const key of wrong) {
      if (server[key as keyof typeof server] !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `"${key}" is for ${stdio ? "HTTP" : "stdio"} servers, and this one has ${stdio ? "a command" : "a url"}`,
        });
      }
    }
    if (server.type && (server.type === "stdio") !== stdio) {
      ctx.addIssue({ code: "custom", path: ["type"], message: `type "${server.type}" does not match` });
    }
  });

/** Between an MCP server's name and its tool's in the session's tool names: `server__tool`. */
export const MCP_TOOL_SEPARATOR = "__";

/**
 * An MCP tool's session name holds only these (providers accept no others), at most MCP_TOOL_NAME_MAX of them:
 * any other character of the server's tool name becomes '_' (src/tools/mcp/names.ts).
 */
export const MCP_TOOL_NAME_CHARS = "A-Za-z0-9_\\-";
export const MCP_TOOL_NAME_MAX = 64;

/** Server name → server. Names prefix their tools (`name__tool`), so they are short and hold no "__". */
export const McpServers = z.record(
  z
    .string()
    .regex(
      /^(?!.*__)[A-Za-z0-9_-]{1,32}$/,
      "an MCP server name is 1 to 32 letters, digits, '-' or '_', without '__'",
    ),
  McpServer,
);

export const SessionDefaults = SessionConfig.extend({
  harness: z.string().optional(),
  /** A name from `providers`, or inline settings (as before named providers). */
  provider: ProviderChoice.optional(),
  permissions: PermissionPolicy.optional(),
  /** Host-side: started by Brain for each session, never sent to a runner. */
  mcp_servers: McpServers.optional(),
});

/**
 * The families' own settings, as the catalog of harness families (src/harnesses/catalog.ts) declares them:
 * `cli.<family>` objects and the fields of the shared `nui` block. Protocol names no family: the catalog passes
 * its schemas to `brainConfigSchema`, and this generic form only says each is an object.
 */
export interface FamilySettingsSchemas {
  /** Family name → the schema of `cli.<family>`. */
  cli: Record<string, z.ZodType>;
  /** Field → schema, merged from every family that reads the shared `nui` block. */
  nui: Record<string, z.ZodType>;
}

/** What a daemon does with closed sessions over time (README "Retention"). */
export const Retention = z
  .strictObject({
    /** Compact a closed session's log (its completed turns' deltas folded into their messages) after this idle time. */
    compact_after_minutes: z.number().positive().optional(),
    /** A log's sealed segments last written this long ago move to the session's archive/ (gzip'd). */
    archive_segments_after_minutes: z.number().positive().optional(),
    /** A log's sealed segments (archived or not) last written this long ago are deleted. */
    drop_segments_after_minutes: z.number().positive().optional(),
    /** Past this many MB a log's oldest sealed segments leave it (archived when archiving is set, else deleted). */
    max_log_mb: z.number().positive().optional(),
  })
  .superRefine((r, ctx) => {
    if (Object.values(r).every((v) => v === undefined))
      ctx.addIssue({
        code: "custom",
        message:
          "set at least one of compact_after_minutes, archive_segments_after_minutes, drop_segments_after_minutes, max_log_mb (or leave retention out)",
      });
    const archive = r.archive_segments_after_minutes;
    const drop = r.drop_segments_after_minutes;
    if (archive !== undefined && drop !== undefined && drop <= archive)
      ctx.addIssue({
        code: "custom",
        path: ["drop_segments_after_minutes"],
        message: `must be more than archive_segments_after_minutes (${archive}): a segment is archived first, then dropped`,
      });
  });

/** Bounds `brain serve` keeps per tenant, so that no tenant's load can take the host from the others. */
export const Limits = z.strictObject({
  /** Sessions one tenant may hold open on this daemon at once (default 256); a create or reopen past it is a 429. */
  open_sessions_per_tenant: z.number().int().positive().optional(),
  /**
   * Sessions one tenant may keep stored, open or closed (default 10000); a create, fork or handoff past it is a
   * 429 until the tenant deletes one.
   */
  stored_sessions_per_tenant: z.number().int().positive().optional(),
  /** Event streams (SSE) one tenant may hold open at once (default 512); past it a new stream is a 429. */
  event_streams_per_tenant: z.number().int().positive().optional(),
  /** Answers of GET /v1/sessions/{id}/log one tenant may have on their way at once (default 8); past it a 429. */
  log_reads_per_tenant: z.number().int().positive().optional(),
  /** Request bodies one tenant may be sending at once (default 16); past it a 429. */
  request_bodies_per_tenant: z.number().int().positive().optional(),
  /** nui HITL waits (GET /api/hitl/requests/{id}/wait) one tenant may hold at once (default 256); past it a 429. */
  hitl_waits_per_tenant: z.number().int().positive().optional(),
  /**
   * Cluster mode: commands, reads and HITL lookups one tenant may have waiting on other nodes at once (default 64);
   * past it a 429. Each holds a socket and its body while a frozen owner is tried until its lease ends.
   */
  forwards_per_tenant: z.number().int().positive().optional(),
  /**
   * Bytes one session's log may hold on this host (default 1 GiB, 1073741824); past it the session's prompts and
   * steers are a 429 (what it logged stays). Bounds the disk one client's prompts can take through a session.
   */
  log_bytes_per_session: z.number().int().positive().optional(),
  /**
   * Bytes all of one tenant's sessions may hold on this host, their logs and checkpoints (default 64 GiB,
   * 68719476736); past it the tenant's prompts, steers, checkpoints, forks, handoffs and new sessions are a 429
   * until it deletes sessions.
   * Without it a tenant could hold log_bytes_per_session × stored_sessions_per_tenant.
   */
  log_bytes_per_tenant: z.number().int().positive().optional(),
});
export const DEFAULT_OPEN_SESSIONS_PER_TENANT = 256;
export const DEFAULT_STORED_SESSIONS_PER_TENANT = 10_000;
export const DEFAULT_EVENT_STREAMS_PER_TENANT = 512;
export const DEFAULT_LOG_BYTES_PER_SESSION = 1 << 30;
/** 64 sessions at their own bound: thousands of ordinary sessions (megabytes each), a bounded share of one disk. */
export const DEFAULT_LOG_BYTES_PER_TENANT = 64 * 2 ** 30;

/**
 * What each session's container may take of this host (the docker harness, sandbox: docker, devcontainer): without
 * a bound one session's fork bomb or leak takes the whole host from every other tenant. Operator-only: no session
 * option, agent definition's docker_args or image can raise them (src/harnesses/http/container-limits.ts).
 */
export const ContainerLimits = z.strictObject({
  /** Memory, swap included, as Docker writes it: bytes or a number with k, m or g (default "4g"). */
  memory: z
    .string()
    .regex(/^[1-9][0-9]*[kmg]?$/i, 'a size as Docker writes it, e.g. "4g" or "512m"')
    .optional(),
  /** Processes and threads at once (default 4096): a fork bomb stops there. */
  pids: z.number().int().min(16).optional(),
  /** CPUs' worth of time (default 2, or this host's count when it has fewer). */
  cpus: z.number().positive().optional(),
});

const GenericBlock = z.record(z.string(), z.unknown());

/** Cluster mode for `brain serve` (README "Cluster mode"): what `--nats`, `--node` and BRAIN_LEASE_TTL_MS set. */
export const ClusterSettings = z.strictObject({
  /** NATS server URLs (nats://HOST:PORT), any node of the NATS cluster; more than one for failover. */
  nats: z.array(z.string().regex(/^(nats|tls):\/\/\S+$/, "a nats://HOST:PORT URL")).min(1),
  /** This Brain node's name, as other nodes see the owner of a session (default: host name and pid). */
  node: z.string().min(1).optional(),
  /** How long a session's lease lasts without renewal (ms, default 10000): the longest a failover waits. */
  lease_ttl_ms: z.number().int().min(500).optional(),
});

function configSchema<C extends z.ZodType, N extends z.ZodType>(cli: C, nui: N) {
  return z
    .strictObject({
      $schema: z.string().optional(),
      cli: cli.optional(),
      nui: nui.optional(),
      harnesses: z.record(z.string(), HarnessEntry).optional(),
      /** The providers sessions may use, by name; a daemon's clients choose among these and nothing else. */
      providers: z.record(ProviderName, ProviderSettings).optional(),
      defaults: SessionDefaults.optional(),
      retention: Retention.optional(),
      limits: Limits.optional(),
      /** What each session's container may take of this host: memory, processes, CPUs. */
      containers: ContainerLimits.optional(),
      /** `brain serve` in cluster mode: sessions on NATS JetStream shared by every node. */
      cluster: ClusterSettings.optional(),
    })
    .superRefine((config, ctx) => {
      const inline = typeof config.defaults?.provider === "object" ? config.defaults.provider : undefined;
      const settings: [PropertyKey[], ProviderSettings | undefined][] = [
        ...Object.entries(config.providers ?? {}).map(([name, p]): [PropertyKey[], ProviderSettings] => [
          ["providers", name],
          p,
        ]),
        [["defaults", "provider"], inline],
      ];
      for (const [path, provider] of settings) {
        if (provider?.base_url && urlHoldsCredentials(provider.base_url))
          ctx.addIssue({ code: "custom", path: [...path, "base_url"], message: URL_CREDENTIALS });
        // Not in ProviderSettings itself: a session record made before this check must still read.
        if (provider?.api_key_env !== undefined && !VARIABLE_NAME.test(provider.api_key_env))
          ctx.addIssue({ code: "custom", path: [...path, "api_key_env"], message: KEY_ENV_NAME });
      }
      const chosen = config.defaults?.provider;
      if (typeof chosen === "string" && !config.providers?.[chosen]) {
        const known = Object.keys(config.providers ?? {}).join(", ") || "none";
        ctx.addIssue({
          code: "custom",
          path: ["defaults", "provider"],
          message: `names provider "${chosen}", which is not in "providers" (configured: ${known})`,
        });
      }
    });
}

/** brain.config.json with each family's settings checked strictly: unknown families and fields are named. */
export function brainConfigSchema(families: FamilySettingsSchemas) {
  const cli = z.strictObject(
    Object.fromEntries(Object.entries(families.cli).map(([name, schema]) => [name, schema.optional()])),
  );
  return configSchema(cli, z.strictObject(families.nui));
}

/** The config's shape without the families' checks (what code reads after `brainConfigSchema` accepted it). */
export const BrainConfig = configSchema(z.record(z.string(), GenericBlock), GenericBlock);

export type HarnessEntry = z.infer<typeof HarnessEntry>;
export type ProviderSettings = z.infer<typeof ProviderSettings>;
export type ProviderChoice = z.infer<typeof ProviderChoice>;
export type SessionDefaults = z.infer<typeof SessionDefaults>;
export type BrainConfig = z.infer<typeof BrainConfig>;
export type McpServer = z.infer<typeof McpServer>;
export type McpServers = z.infer<typeof McpServers>;
export type ContainerLimits = z.infer<typeof ContainerLimits>;
