// A module script run in a child Node whose heap is `mib` MiB: the test that a path holds a bounded part of what it
// reads, where reading it whole ran out of heap. An out-of-memory or a failed exit fails the test, naming stderr.
import { spawnSync } from "node:child_process";
import { expect } from "vitest";

/** Runs `script` (an ES module's text) with a heap of `mib` MiB and returns what it wrote to stdout. */
export function runInSmallHeap(script: string, mib: number): string {
  const child = spawnSync(
    process.execPath,
    [`--max-old-space-size=${mib}`, "--input-type=module", "-e", script],
    {
      encoding: "utf8",
    },
  );
  expect(child.stderr).not.toMatch(/heap out of memory/);
  expect(child.status, child.stderr).toBe(0);
  return child.stdout;
}
