// The bench's command line: a list given as several arguments, an unknown section or a bad --reps is said with
// the usage and exit code 2, not a stack from node:util's parseArgs.
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";

function bench(...args: string[]) {
  // UV_THREADPOOL_SIZE set: the run does not start itself again under the daemon's thread pool.
  return spawnSync(process.execPath, ["dist/bench/run.js", ...args], {
    encoding: "utf8",
    env: { ...process.env, UV_THREADPOOL_SIZE: "4" },
  });
}

it.each([
  [
    ["--only", "relay", "tools"],
    "Unexpected argument 'tools'. This command does not take positional arguments (--only takes one list: --only relay,tools)",
  ],
  [["--only", "relay,nope"], 'unknown benchmark "nope"'],
  [["--reps", "0"], '--reps must be a positive integer, not "0"'],
  [["--fast"], "Unknown option '--fast'"],
])("refuses %j with the usage and no stack", (args, says) => {
  const ran = bench(...args);
  expect(ran.stderr).toContain(says);
  expect(ran.stderr).toContain("usage: node dist/bench/run.js");
  expect(ran.stderr).not.toMatch(/\n\s+at /);
  expect(ran.status).toBe(2);
});
