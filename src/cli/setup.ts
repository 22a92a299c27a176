// Builds a Brain from the config: the built-in echo runner, every runner in the "harnesses" block, the built-in
// tools, and the embedded store under $BRAIN_HOME (default ~/.brain).
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Brain } from "../core/brain.js";
import { SECRET_NAME, type Secret } from "../core/redact.js";
import { HarnessRegistry } from "../core/registry.js";
import { ApiHarnessFactory } from "../harnesses/api/factory.js";
import { cliHarnessFactories } from "../harnesses/cli/factories.js";
import { listExtensions } from "../harnesses/ext/extensions.js";
import { extensionsDir, nuiHarnessFactories } from "../harnesses/nui/families.js";
import { splitCommandLine } from "../harnesses/process/command.js";
import { ProcessFactory } from "../harnesses/process/factory.js";
import type { HarnessEntry } from "../protocol/config.js";
import { FsSessionStore, type LogHolder } from "../store/fs/index.js";
import { BuiltinTools } from "../tools/builtin.js";
import { mcpSessionTools } from "../tools/mcp/index.js";
import { ToolRouter } from "../tools/router.js";
import type { LoadedConfig } from "./config.js";

/** The project root, whether this module runs compiled (dist/src/cli) or from source under vitest (src/cli). */
const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, here.includes(`${sep}dist${sep}`) ? "../../.." : "../..");

export function brainHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.BRAIN_HOME ? resolve(env.BRAIN_HOME) : join(homedir(), ".brain");
}

export function echoRunnerPath(): string {
  return join(projectRoot, "dist/runners/echo/main.js");
}

/** The reference runner on pi's agent core (runners/pi); it takes its model and provider from the session. */
export function piRunnerPath(): string {
  return join(projectRoot, "runners/pi/dist/main.js");
}

export function harnessFactories(loaded: LoadedConfig): ProcessFactory[] {
  const factories = new Map<string, ProcessFactory>();
  factories.set(
    "echo",
    new ProcessFactory({ name: "echo", command: process.execPath, args: [echoRunnerPath()] }),
  );
  factories.set("pi", new ProcessFactory({ name: "pi", command: process.execPath, args: [piRunnerPath()] }));
  for (const [name, entry] of Object.entries(loaded.config.harnesses ?? {})) {
    factories.set(name, factoryFor(name, entry, loaded.dir));
  }
  return [...factories.values()];
}

function factoryFor(name: string, entry: HarnessEntry, dir: string): ProcessFactory {
  const words = typeof entry.command === "string" ? splitCommandLine(entry.command) : entry.command;
  const [command, ...args] = words;
  return new ProcessFactory({
    name,
    command: command!,
    args,
    cwd: dir,
    env: entry.env,
    shared: entry.shared,
    supportsSteering: entry.steering,
  });
}

/** remote, docker, devcontainer and the harnesses of installed nui extensions (`ext:<extension>/<id>`). */
export function nuiFactories(loaded: LoadedConfig, home = brainHome()) {
  const runners = Object.fromEntries(
    Object.entries(loaded.config.harnesses ?? {}).map(([name, entry]) => {
      const [command, ...args] =
        typeof entry.command === "string" ? splitCommandLine(entry.command) : entry.command;
      return [name, { command: command!, args, cwd: loaded.dir, ...(entry.env ? { env: entry.env } : {}) }];
    }),
  );
  return nuiHarnessFactories({
    brainHome: home,
    configDir: loaded.dir,
    ...(loaded.config.nui ? { settings: loaded.config.nui } : {}),
    runners: {
      echo: { command: process.execPath, args: [echoRunnerPath()] },
      pi: { command: process.execPath, args: [piRunnerPath()] },
      ...runners,
    },
  });
}

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
    ...Object.values(loaded.config.cli ?? {}).map((c) => c?.env),
    ...listExtensions(extensionsDir(home)).extensions.map((e) => e.runtime?.env),
  ];
  return envs.flatMap((env) =>
    Object.entries(env ?? {})
      .filter(([name]) => SECRET_NAME.test(name))
      .map(([name, value]) => ({ name, value })),
  );
}

/** `holder`: who this process is, as another process that finds a session open here is told. */
export function createBrain(
  loaded: LoadedConfig,
  home = brainHome(),
  { holder = { kind: "cli" }, secrets = [] }: { holder?: LogHolder; secrets?: Secret[] } = {},
): Brain {
  return new Brain({
    providers: loaded.config.providers ?? {},
    secretNames: configSecretNames(loaded),
    secrets: [...secrets, ...literalSecrets(loaded, home)],
    store: new FsSessionStore(home, undefined, holder),
    // The in-process api harness comes first, so a runner the config names "api" takes its place.
    harnesses: new HarnessRegistry([
      new ApiHarnessFactory(),
      // The built-in CLI agents (claude-code, codex, pi-cli, opencode); a runner of the same name replaces one.
      ...cliHarnessFactories(loaded.config.cli),
      ...harnessFactories(loaded),
      ...nuiFactories(loaded, home).factories,
    ]),
    tools: new ToolRouter([new BuiltinTools()]),
    // Each session's mcp_servers; relative cwds resolve against the config's directory.
    sessionTools: mcpSessionTools({ baseDir: loaded.dir }),
  });
}
