// What a Brain is made of: its store, harnesses and tools, and the providers, secrets and seeders it is given.
import type { ProviderSettings } from "../protocol/config.js";
import type { ProviderCredentials } from "../protocol/runner.js";
import type { SessionRecord } from "../protocol/session.js";
import type { Secret } from "./redact.js";
import type { HarnessRegistry } from "./registry.js";
import type { Seeder } from "./seed-messages.js";
import type { SessionStore } from "./store.js";
import type { SessionToolServices, ToolCatalog } from "./tools.js";

export interface BrainOptions {
  store: SessionStore;
  harnesses: HarnessRegistry;
  tools: ToolCatalog;
  /** Resolves credentials when a session opens; by default the key comes from `provider.api_key_env`. */
  credentials?: (settings: ProviderSettings | undefined) => ProviderCredentials;
  env?: NodeJS.ProcessEnv;
  /** Where a session naming no provider may take provider variables from: the operator's CLI only, never a daemon. */
  providerEnv?: NodeJS.ProcessEnv;
  /** The tool services of one session (its `mcp_servers`), made when it opens; src/tools/mcp makes them. */
  sessionTools?: (record: SessionRecord) => SessionToolServices | undefined;
  /** The providers sessions may name (brain.config.json `providers`). */
  providers?: Record<string, ProviderSettings>;
  /**
   * Values never to be written anywhere (token values, say), besides the ones Brain finds itself: secret-named
   * environment variables, the providers' keys and the variables `secretNames` lists.
   */
  secrets?: Secret[];
  /** Variables whose values are secret whatever their names (`${VAR}` of configured MCP servers, say). */
  secretNames?: string[];
  /** The families that write their native state from Brain's log (handoff, rebuild), by harness name. */
  seeders?: Record<string, Seeder>;
  /** How many sessions one tenant may hold open here at once (see open-limit.ts); absent: no bound. */
  openSessionsPerTenant?: number;
  /** Sessions one tenant may keep stored (./stored-limit.ts); absent: no bound. */
  storedSessionsPerTenant?: number;
  /** Bytes one session's log may hold before its prompts and steers are refused (./log-bound.ts); absent: no bound. */
  logBytesPerSession?: number;
  /** Bytes all of one tenant's sessions may hold before their prompts are refused (./tenant-bytes.ts); absent: no bound. */
  logBytesPerTenant?: number;
}
