// The bench's watchdog: one fixed figure for a whole section (120 s quick) aborted the tool round-trip section on a
// loaded machine, whose 32-in-flight part alone runs over 100,000 calls. Each step now has a watchdog scaled to its
// calls, naming the step when it hangs, and the section's is the sum of its steps'.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { toolRoundTripBudgetMs } from "../bench/tool-roundtrip.js";

it("aborts a run whose step hangs, naming the step", () => {
  const cleanup = pathToFileURL(path.resolve("dist/bench/lib/cleanup.js")).href;
  // Something holds the loop (as a runner child's pipe would) while the step never ends.
  const script = `const { installCleanup, watched } = await import(${JSON.stringify(cleanup)});
installCleanup();
setInterval(() => {}, 1000);
await watched("the hung step", 300, () => new Promise(() => {}));`;
  const ran = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(ran.stderr).toContain("bench: watchdog: the hung step took more than 0.3 s; aborting");
  expect(ran.status).toBe(2);
});

it("gives the tool round-trip section a watchdog that grows with its reps and calls", () => {
  const quick = toolRoundTripBudgetMs({ quick: true, reps: 2 });
  // The quick section's calls, every side's warm-up and timed runs, at 40 round trips/s (a loaded machine's
  // sequential, durable rate is still several times that).
  const calls = 4 * (1_000 + 3 * 600 + 6 * 600) + 3 * (1_000 + 3 * 4_000 + 6 * 4_000);
  expect(quick).toBeGreaterThanOrEqual(calls * 25);
  expect(toolRoundTripBudgetMs({ quick: true, reps: 4 })).toBeGreaterThan(quick);
  expect(toolRoundTripBudgetMs({ quick: false, reps: 2 })).toBeGreaterThan(quick);
});
