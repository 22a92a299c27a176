// The runner family's catalog entry: programs that speak the runner stdio protocol. Two are built in (echo, and
// pi on pi's agent core); brain.config.json's `harnesses` block adds one per entry, by name.
import type { HarnessEntry } from "../../protocol/config.js";
import type { FamilyContext, FamilyDescriptor } from "../family.js";
import { splitCommandLine } from "./command.js";
import { ProcessFactory, type ProcessHarnessSpec } from "./factory.js";
import { echoRunnerPath, piRunnerPath } from "./runner-paths.js";
import type { RunnerCommand } from "./runner-process.js";
import { Spawner } from "./spawner.js";

export { echoRunnerPath, piRunnerPath };

interface Runner extends RunnerCommand {
  shared?: boolean;
  steering?: boolean;
  movable?: boolean;
  verifyHistory?: boolean;
  needsProvider?: boolean;
  operatorOptions?: ProcessHarnessSpec["operatorOptions"];
}

/** pi's options only the operator sets (defaults, agent definitions), and why, for a network caller's refusal. */
const PI_OPERATOR_OPTIONS = {
  compat:
    "its switches reach what the operator's provider is paid and counted for (supportsUsageInStreaming false leaves each turn's usage uncounted; a gateway's routing picks the upstream providers and prices the operator's key pays)",
};

function entryRunner(name: string, entry: HarnessEntry, dir: string): Runner {
  const [command, ...args] =
    typeof entry.command === "string" ? splitCommandLine(entry.command) : entry.command;
  return {
    name,
    command: command!,
    args,
    cwd: dir,
    ...(entry.env ? { env: entry.env } : {}),
    ...(entry.shared !== undefined ? { shared: entry.shared } : {}),
    ...(entry.steering !== undefined ? { steering: entry.steering } : {}),
    ...(entry.movable !== undefined ? { movable: entry.movable } : {}),
    ...(entry.verify_history !== undefined ? { verifyHistory: entry.verify_history } : {}),
    ...(entry.needs_provider !== undefined ? { needsProvider: entry.needs_provider } : {}),
  };
}

/** echo, pi, then the config's runners (one of the same name replaces a built-in). */
export function configuredRunners(ctx: Pick<FamilyContext, "config" | "configDir">): Runner[] {
  const runners = new Map<string, Runner>([
    // It repeats the prompt: no model, no key, no network.
    ["echo", { name: "echo", command: process.execPath, args: [echoRunnerPath()], needsProvider: false }],
    [
      "pi",
      { name: "pi", command: process.execPath, args: [piRunnerPath()], operatorOptions: PI_OPERATOR_OPTIONS },
    ],
  ]);
  for (const [name, entry] of Object.entries(ctx.config.harnesses ?? {})) {
    runners.set(name, entryRunner(name, entry, ctx.configDir));
  }
  return [...runners.values()];
}

export const runnerFamily: FamilyDescriptor = {
  name: "runner",
  summary: "a program speaking the runner stdio protocol (echo, pi, and the config's harnesses block)",
  capabilities: {
    steering: "per-harness",
    images: false,
    sharedHost: "per-harness",
    provider: "per-harness",
  },
  factories: (ctx) => {
    // One spawn host for all of them (the catalog's, shared with other families), started by the first start.
    const spawner = ctx.spawner ?? new Spawner();
    return configuredRunners(ctx).map(
      ({ shared, steering, movable, ...runner }) =>
        new ProcessFactory(
          {
            ...runner,
            ...(movable !== undefined ? { movable } : {}),
            ...(shared !== undefined ? { shared } : {}),
            ...(ctx.warmRunners ? {} : { spares: 0 }),
            ...(steering !== undefined ? { supportsSteering: steering } : {}),
          },
          spawner,
        ),
    );
  },
  launched: (ctx, launcher) =>
    configuredRunners(ctx).map((runner) => {
      // Inside the container, node is the image's: the host's absolute node path means nothing there.
      const command = runner.command === process.execPath ? "node" : runner.command;
      const [program, ...prefix] = launcher;
      return new ProcessFactory({
        name: runner.name,
        command: program!,
        args: [...prefix, command, ...runner.args],
        // Made for one session in one container: a spare would outlive both.
        spares: 0,
        ...(runner.cwd ? { cwd: runner.cwd } : {}),
        ...(runner.env ? { env: runner.env } : {}),
        // What the entry says of the runner holds wherever it runs: a stateless one is not checked on resume.
        ...(runner.verifyHistory !== undefined ? { verifyHistory: runner.verifyHistory } : {}),
        ...(runner.steering !== undefined ? { supportsSteering: runner.steering } : {}),
        ...(runner.movable !== undefined ? { movable: runner.movable } : {}),
        ...(runner.needsProvider !== undefined ? { needsProvider: runner.needsProvider } : {}),
        ...(runner.operatorOptions ? { operatorOptions: runner.operatorOptions } : {}),
      });
    }),
};
