// Builds a Brain from the config: the built-in echo runner, every runner in the "harnesses" block, the built-in
// tools, and the embedded store under $BRAIN_HOME (default ~/.brain).
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Brain } from "../core/brain.js";
import { HarnessRegistry } from "../core/registry.js";
import { splitCommandLine } from "../harnesses/process/command.js";
import { ProcessFactory } from "../harnesses/process/factory.js";
import type { HarnessEntry } from "../protocol/config.js";
import { FsSessionStore } from "../store/fs/index.js";
import { BuiltinTools } from "../tools/builtin.js";
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

export function createBrain(loaded: LoadedConfig, home = brainHome()): Brain {
  return new Brain({
    store: new FsSessionStore(home),
    harnesses: new HarnessRegistry(harnessFactories(loaded)),
    tools: new ToolRouter([new BuiltinTools()]),
  });
}
