// The conformance kit passes runners/pi, every check run (it calls a model, so none is skipped): the same
// command CI runs, `brain conformance -- node runners/pi/dist/main.js`.
import { describe, expect, it } from "vitest";
import { runConformance } from "../../src/cli/commands/conformance/kit.js";
import { PI_RUNNER } from "./helpers.js";

describe("brain conformance on runners/pi", () => {
  it("passes every check", async () => {
    const report = await runConformance({
      command: process.execPath,
      args: [PI_RUNNER],
      interruptGraceMs: 3_000,
      turnTimeoutMs: 30_000,
    });
    const summary = JSON.stringify(report.checks, null, 2);
    expect(
      report.checks.filter((c) => c.status !== "pass"),
      summary,
    ).toEqual([]);
    expect(report.passed).toBe(true);
  }, 120_000);
});
