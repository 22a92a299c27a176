// `brain run`'s first step, before zod, the config schema and the harness catalog load (about half of a short
// run): when the arguments and the config file's JSON already say which runner a new session will start, spawn
// it now, so its start-up overlaps Brain's own. Nothing here decides anything: the validated path (commands/
// run.ts) resolves the harness as always and its factory takes this child only when it would spawn exactly the
// same launch; otherwise the child is killed and the run goes on as if it had never been started. Anything
// unexpected here means no early start, never an error: the validated path reports mistakes.
//
// Forked from this process itself, not from a spawn host (spawner.ts): this early, the process has loaded next
// to nothing, so a fork copies few page tables and leaves few pages to fault, while a host would first cost a
// Node start of its own, the very start this step exists to overlap.

import { existsSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import type { ExitKills } from "../core/exit-kills.js";
import { findMissing, splitCommandLine } from "../harnesses/process/command.js";
import { echoRunnerPath, piRunnerPath } from "../harnesses/process/runner-paths.js";
import { SpawnRecords, spawnRecordsDir } from "../harnesses/process/spawn-records.js";
import { type RunnerLaunch, StartedRunner, spawnRunner } from "../harnesses/process/started-runner.js";
import { MAX_FRAME } from "../protocol/ndjson.js";
import { brainHome } from "./brain-home.js";
import { configFile } from "./config-file.js";

/** `brain run`'s options (commands/run.ts parses with these too, plus --config). */
export const RUN_OPTIONS = {
  harness: { type: "string" },
  agent: { type: "string" },
  session: { type: "string" },
  model: { type: "string" },
  provider: { type: "string" },
  tool: { type: "string", multiple: true },
  allow: { type: "string", multiple: true },
  deny: { type: "string", multiple: true },
  json: { type: "boolean" },
  server: { type: "string" },
  token: { type: "string" },
} as const;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const own = (o: Json, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);

/** Spawns the runner `brain run <args>` will most likely use, or returns undefined when that is not clear. */
export function startEarlyRunner(
  args: string[],
  cwd = process.cwd(),
  home?: string,
  exits?: ExitKills,
): StartedRunner | undefined {
  let launch: RunnerLaunch | undefined;
  let records: string;
  try {
    launch = earlyLaunch(args, cwd);
    // A $BRAIN_HOME that is no directory: the command's own start says so, with its exit status.
    records = spawnRecordsDir(home ?? brainHome());
  } catch {
    return undefined;
  }
  // A missing program is refused by the factory before it spawns: not started here either.
  if (!launch || findMissing(launch.command, launch.args, launch.cwd ?? cwd)) return undefined;
  const child = spawnRunner(launch);
  if (child.pid === undefined) {
    child.on("error", () => {}); // the validated path spawns again and reports the failure
    return undefined;
  }
  // Recorded as the spawn host's children are: a Brain killed before it could stop the runner's group (kill -9,
  // the OOM killer) leaves it to the next Brain's start to stop.
  return new StartedRunner(launch, child, new SpawnRecords(records), exits);
}

/** The launch of a new session's runner, from the arguments and the config's JSON, when they name one. */
function earlyLaunch(args: string[], cwd: string): RunnerLaunch | undefined {
  const { values, positionals } = parseArgs({
    args,
    options: { config: { type: "string" }, ...RUN_OPTIONS },
    allowPositionals: true,
    strict: true,
  });
  // The daemon's session, an existing session (of any harness) or an agent definition: not known this early.
  if (values.server !== undefined || values.session !== undefined || values.agent !== undefined) return;
  const prompt = positionals.join(" ");
  // An empty or oversized prompt is refused before any session: no runner for it.
  if (!prompt || Buffer.byteLength(JSON.stringify(prompt)) > MAX_FRAME - 1024) return;
  const file = configFile(values.config, cwd);
  let config: unknown = {};
  let dir = cwd;
  if (existsSync(file)) {
    config = JSON.parse(readFileSync(file, "utf8"));
    dir = dirname(file);
  } else if (values.config !== undefined) return;
  if (!isObject(config)) return;
  const defaults = own(config, "defaults");
  const name = values.harness ?? (isObject(defaults) ? own(defaults, "harness") : undefined) ?? "echo";
  if (typeof name !== "string") return;
  const harnesses = own(config, "harnesses");
  const entry = isObject(harnesses) ? own(harnesses, name) : undefined;
  if (entry !== undefined) return entryLaunch(entry, dir);
  if (name === "echo") return { command: process.execPath, args: [echoRunnerPath()] };
  if (name === "pi") return { command: process.execPath, args: [piRunnerPath()] };
  return undefined;
}

/** A `harnesses` entry's launch, as the runner family builds it; undefined for a shared host or a bad entry. */
function entryLaunch(entry: unknown, dir: string): RunnerLaunch | undefined {
  if (!isObject(entry) || own(entry, "shared") === true) return undefined;
  const line = own(entry, "command");
  const words =
    typeof line === "string"
      ? splitCommandLine(line)
      : Array.isArray(line) && line.every((w) => typeof w === "string")
        ? line
        : [];
  const [command, ...rest] = words as string[];
  if (!command) return undefined;
  const env = own(entry, "env");
  if (env !== undefined && !(isObject(env) && Object.values(env).every((v) => typeof v === "string")))
    return undefined;
  return { command, args: rest, cwd: dir, ...(env ? { env: env as Record<string, string> } : {}) };
}
