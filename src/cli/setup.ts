// Builds a Brain from the config: the harnesses of the catalog's families (the api loop, the CLI agents, the
// runners of the "harnesses" block, the nui families), the built-in tools, and the embedded store under
// $BRAIN_HOME (default ~/.brain).

import { Brain, type SessionStore } from "../core/brain.js";
import { hostSecrets } from "../core/credentials.js";
import { ExitKills } from "../core/exit-kills.js";
import type { HarnessFactory } from "../core/harness.js";
import { SECRET_NAME, type Secret } from "../core/redact.js";
import { HarnessRegistry } from "../core/registry.js";
import { builtinCatalog, catalogSeeders } from "../harnesses/catalog.js";
import { extensionsDir, listExtensions } from "../harnesses/ext/extensions.js";
import type { Catalog } from "../harnesses/family.js";
import { containerRecordsDir, removeOrphanedContainers } from "../harnesses/http/container-records.js";
import { spawnRecordsDir, stopOrphanedGroups } from "../harnesses/process/spawn-records.js";
import { FsSessionStore, type LogHolder } from "../store/fs/index.js";
import { BuiltinTools } from "../tools/builtin.js";
import { mcpSessionTools } from "../tools/mcp/session-servers.js";
import { ToolRouter } from "../tools/router.js";
import type { LoadedConfig } from "./config.js";
import { brainHome, configHarnesses } from "./harness-setup.js";
import { runnerArgvWarnings } from "./runner-argv-warnings.js";

export { echoRunnerPath, piRunnerPath } from "../harnesses/process/descriptor.js";
export { brainHome, configHarnesses, configHarnessTypes } from "./harness-setup.js";

/** Variables the config names as holding secrets: inline providers' keys and `${VAR}` in MCP servers. */
export function configSecretNames(loaded: LoadedConfig): string[] {
  const defaults = loaded.config.defaults;
  const inline = typeof defaults?.provider === "object" ? defaults.provider.api_key_env : undefined;
  const refs = JSON.stringify(defaults?.mcp_servers ?? {}).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g);
  return [...(inline ? [inline] : []), ...[...refs].map((m) => m[1]!)];
}

/** Secret-named variables the config and installed extensions set literally (runner, CLI and host `env`). */
export function literalSecrets(loaded: LoadedConfig, home: string): Secret[] {
  const envs: (Record<string, string> | undefined)[] = [
    ...Object.values(loaded.config.harnesses ?? {}).map((h) => h.env),
    ...Object.values(loaded.config.cli ?? {}).map((c) => c.env as Record<string, string> | undefined),
    ...listExtensions(extensionsDir(home)).extensions.map((e) => e.runtime?.env),
  ];
  return envs.flatMap((env) =>
    Object.entries(env ?? {})
      .filter(([name]) => SECRET_NAME.test(name))
      .map(([name, value]) => ({ name, value })),
  );
}

/**
 * The secrets a Brain made from this config redacts (../core/brain.ts): secret-named variables, the variables the
 * config names (providers' api_key_env, whatever their names), and the values it sets literally. For what prints
 * without a Brain: the CLI's errors.
 */
export function configSecrets(loaded: LoadedConfig, home: string, env = process.env): Secret[] {
  return [
    ...hostSecrets(loaded.config.providers, configSecretNames(loaded), env),
    ...literalSecrets(loaded, home),
  ];
}

/**
 * `holder`: who this process is, as another process that finds a session open here is told. `store`: another
 * session store than the embedded one under `home` (cluster mode's NATS store).
 */
export function createBrain(
  loaded: LoadedConfig,
  home = brainHome(),
  {
    holder = { kind: "cli" },
    secrets = [],
    catalog = builtinCatalog(),
    warmRunners = false,
    store,
    harnesses,
    providerEnv,
    openSessionsPerTenant,
    storedSessionsPerTenant,
    logBytesPerSession,
    logBytesPerTenant,
    exits = new ExitKills(),
  }: {
    holder?: LogHolder;
    secrets?: Secret[];
    catalog?: Catalog;
    warmRunners?: boolean;
    store?: SessionStore;
    /** The factories of configHarnesses(loaded, home, catalog), when the caller built them already. */
    harnesses?: HarnessFactory[];
    /** BrainOptions.providerEnv: only a host that serves the operator alone passes its environment. */
    providerEnv?: NodeJS.ProcessEnv;
    /** BrainOptions.openSessionsPerTenant: a daemon's bound (brain.config.json `limits`). */
    openSessionsPerTenant?: number;
    /** BrainOptions.storedSessionsPerTenant: a daemon's bound (brain.config.json `limits`). */
    storedSessionsPerTenant?: number;
    /** BrainOptions.logBytesPerSession: a daemon's bound (brain.config.json `limits`). */
    logBytesPerSession?: number;
    /** BrainOptions.logBytesPerTenant: a daemon's bound (brain.config.json `limits`). */
    logBytesPerTenant?: number;
    /** The process groups to kill as this process exits (its MCP stdio servers'): the command's, or the Brain's own. */
    exits?: ExitKills;
  } = {},
): Brain {
  stopOrphans(home);
  for (const warning of runnerArgvWarnings(loaded)) process.stderr.write(`brain: warning: ${warning}\n`);
  // A host that keeps warm runners keeps a session directory made ahead too (../store/fs/session-slot.ts).
  const sessions = store ?? new FsSessionStore(home, undefined, holder, { spareSlot: warmRunners });
  // A Brain killed while making a session (a fork restoring its checkpoint, a handoff seeding) left it half made.
  if (sessions instanceof FsSessionStore) void sessions.sweepUnacknowledged();
  return new Brain({
    providers: loaded.config.providers ?? {},
    secretNames: configSecretNames(loaded),
    ...(providerEnv ? { providerEnv } : {}),
    ...(openSessionsPerTenant !== undefined ? { openSessionsPerTenant } : {}),
    ...(storedSessionsPerTenant !== undefined ? { storedSessionsPerTenant } : {}),
    ...(logBytesPerSession !== undefined ? { logBytesPerSession } : {}),
    ...(logBytesPerTenant !== undefined ? { logBytesPerTenant } : {}),
    secrets: [...secrets, ...literalSecrets(loaded, home)],
    store: sessions,
    // In catalog order: a runner the config names "api" or "codex" takes that built-in's place.
    harnesses: new HarnessRegistry(
      harnesses ?? configHarnesses(loaded, home, catalog, warmRunners).factories,
    ),
    seeders: catalogSeeders(catalog),
    tools: new ToolRouter([new BuiltinTools()]),
    // Each session's mcp_servers; relative cwds resolve against the config's directory.
    sessionTools: mcpSessionTools({ baseDir: loaded.dir, exits }),
  });
}

/**
 * Stops what a Brain on this home started and left running when it died together with its spawn host
 * (../harnesses/process/spawn-records.ts). Says so on stderr, the only place a start has to say it.
 */
function stopOrphans(home: string): void {
  const containers = removeOrphanedContainers(containerRecordsDir(home));
  if (containers.found > 0) {
    process.stderr.write(
      `brain: removing ${containers.found} container(s) left running by a Brain that died (${containerRecordsDir(home)})\n`,
    );
  }
  const dir = spawnRecordsDir(home);
  const sweep = stopOrphanedGroups(dir);
  if (sweep.stopped > 0) {
    process.stderr.write(
      `brain: stopped ${sweep.stopped} process group(s) left running by a Brain that died (${dir})\n`,
    );
  }
  if (sweep.malformed.length > 0) {
    process.stderr.write(
      `brain: removed ${sweep.malformed.length} unreadable record(s) from ${dir}: ${sweep.malformed.join(", ")}\n`,
    );
  }
}
