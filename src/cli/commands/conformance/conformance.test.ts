// The kit passes the project's own runners and fails each misbehaviour of the scripted test runner on the
// check that guards the rule it breaks.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiHarnessFactory } from "../../../harnesses/api/factory.js";
import { matrix } from "../conformance.js";
import { runConformance } from "./kit.js";

const root = join(import.meta.dirname, "../../../..");
const scripted = join(root, "dist/src/testing/fixtures/scripted-runner.js");
const echo = join(root, "dist/runners/echo/main.js");

const quick = { openTimeoutMs: 2_000, interruptGraceMs: 1_500, turnTimeoutMs: 20_000 };

async function check(args: string[]) {
  const report = await runConformance({ command: process.execPath, args, ...quick });
  const failed = report.checks.filter((c) => c.status === "fail").map((c) => c.name);
  return { report, failed };
}

describe("brain conformance", () => {
  it("passes runners/echo (the model checks are skipped: it calls no model)", async () => {
    const { report, failed } = await check([echo]);
    expect(failed, JSON.stringify(report.checks, null, 2)).toEqual([]);
    expect(report.checks.find((c) => c.name === "interrupt mid-stream")?.status).toBe("skip");
  });

  it("runs against a configured harness, not only a runner command: the api harness passes every check", async () => {
    const harness = { name: "api", factory: () => new ApiHarnessFactory() };
    const report = await runConformance({ harness, ...quick });
    expect(report.checks.filter((c) => c.status !== "pass")).toEqual([]);
    expect(report).toMatchObject({ subject: "api", kind: "api", passed: true });
    const echoReport = (await check([echo])).report;
    const table = matrix([report, { ...echoReport, subject: "echo" }]).split("\n");
    expect(table[0]).toMatch(/^harness +open +prompt +tool call .* checkpoint fidelity$/);
    expect(table[1]).toMatch(/^api +PASS +PASS/);
    expect(table[2]).toMatch(/^echo +PASS .* skip /);
  });

  it.each(["good", "stderr-noise", "unknown-reply"])(
    "passes the scripted runner in mode %s",
    async (mode) => {
      const { report, failed } = await check([scripted, "--mode", mode]);
      expect(failed, JSON.stringify(report.checks, null, 2)).toEqual([]);
      expect(report.checks.every((c) => c.status === "pass")).toBe(true);
    },
  );

  it.each([
    ["garbage", "prompt", /not JSON/],
    ["oversize", "prompt", /capped at 4 MiB/],
    ["unknown-field", "prompt", /Unrecognized key/],
    ["exit-mid-turn", "prompt", /exited with code 3/],
    ["hang-open", "open", /did not answer "open"/],
    ["chatty-open", "passive open", /model call/],
    ["not-append-only", "checkpoint", /append-only but bytes/],
    ["outside-path", "checkpoint", /outside|\.\./],
    ["wrong-size", "checkpoint", /size/],
    ["tool-error-aborts", "failure separation", /broke the turn/],
    ["ignore-interrupt", "clean interruption", /kill|after the interrupt/],
    // Verified resume catches it first: the restored runner holds none of the conversation the log has.
    ["lossy-checkpoint", "checkpoint fidelity", /native state of runner "subject" is missing/],
  ])("fails mode %s on the %s check", async (mode, checkName, detail) => {
    const { report, failed } = await check([scripted, "--mode", mode]);
    expect(report.passed).toBe(false);
    expect(failed).toContain(checkName);
    expect(report.checks.find((c) => c.name === checkName)?.detail).toMatch(detail);
  });
});
