// opencode keeps sessions in a SQLite database (WAL) that it rewrites every turn and that records the session's
// absolute directory, so the database is not what a checkpoint carries. A checkpoint carries
// `opencode export <id>` (the session as JSON); a restore into a fresh native dir runs `opencode import` in the
// new working directory before the server starts, which rebinds the session to it (cli-relocation.md, recipe 2).
import { HarnessError } from "../../core/harness.js";
import { CliProcess } from "../cli/child.js";
import type { CliProgramRun } from "../cli/harness.js";

export type OneShot = CliProgramRun;

/** Runs `opencode <args>` to completion; resolves with its stdout, rejects with a brain_error naming the step. */
export async function runOpencode(spec: OneShot, args: string[], timeoutMs = 120_000): Promise<string> {
  const lines: string[] = [];
  const child = new CliProcess({
    label: "opencode",
    command: spec.command,
    args,
    env: spec.env,
    cwd: spec.cwd,
    ...(spec.launcher ? { launcher: spec.launcher } : {}),
    onLine: (line) => lines.push(line),
  });
  // Nothing to say on stdin: closing it at once means the command cannot wait for input.
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  void child.stop(timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  if (exit.code !== 0) {
    throw new HarnessError("brain_error", `opencode ${args[0]}: ${child.describeExit()}`);
  }
  return lines.join("\n");
}

/** The exported session JSON from `opencode export` output (it may print other lines before the JSON). */
export function exportedJson(stdout: string): string {
  const start = stdout.indexOf("{");
  if (start < 0)
    throw new HarnessError("brain_error", `opencode export printed no JSON: ${stdout.slice(0, 300)}`);
  const json = stdout.slice(start);
  JSON.parse(json); // a half-written export must not become a checkpoint
  return json;
}
