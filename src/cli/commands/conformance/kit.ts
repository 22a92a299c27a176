// Runs the checks against one runner command and reports each as pass, fail or skip.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { startFakeProvider } from "../../../testing/fake-provider/index.js";
import { CHECKS, type CheckState, Skip } from "./checks.js";
import { KitContext, type KitOptions } from "./context.js";

export interface CheckReport {
  name: string;
  rule: string;
  status: "pass" | "fail" | "skip";
  detail: string;
}

export interface KitReport {
  runner: string[];
  passed: boolean;
  checks: CheckReport[];
}

export async function runConformance(options: KitOptions): Promise<KitReport> {
  // The provider accepts only the key the runner was given in its open frame.
  const apiKey = `conformance-${randomBytes(8).toString("hex")}`;
  const provider = await startFakeProvider({ apiKey });
  const kit = new KitContext(options, provider, apiKey);
  const state: CheckState = { usesModel: false };
  const checks: CheckReport[] = [];
  try {
    let blocked: string | undefined;
    for (const check of CHECKS) {
      const report: CheckReport = { name: check.name, rule: check.rule, status: "pass", detail: "" };
      if (blocked) {
        checks.push({ ...report, status: "skip", detail: `the "${blocked}" check failed` });
        continue;
      }
      try {
        report.detail = await check.run(kit, state);
      } catch (err) {
        report.status = err instanceof Skip ? "skip" : "fail";
        report.detail = (err as Error).message;
        if (report.status === "fail" && check.required) blocked = check.name;
      }
      checks.push(report);
    }
  } finally {
    await kit.brain.close();
    await provider.close();
    rmSync(kit.home, { recursive: true, force: true });
  }
  return {
    runner: [options.command, ...options.args],
    passed: checks.every((c) => c.status !== "fail"),
    checks,
  };
}
