// Runs the checks against one runner command or configured harness and reports each as pass, fail, skip, or
// differs: a rule the harness cannot keep by its nature, with what differed (never a silent pass).
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { startFakeProvider } from "../../../testing/fake-provider/index.js";
import { CHECKS, type CheckState, Differs, Skip } from "./checks.js";
import { KitContext, type KitOptions } from "./context.js";

export interface CheckReport {
  name: string;
  rule: string;
  status: "pass" | "fail" | "skip" | "differs";
  detail: string;
}

export interface KitReport {
  /** The harness name, or the runner's command line. */
  subject: string;
  /** "runner", "api", "cli"; "runner command" for one given by its command line. */
  kind: string;
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
        report.status = err instanceof Skip ? "skip" : err instanceof Differs ? "differs" : "fail";
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
    subject: options.harness?.name ?? [options.command, ...(options.args ?? [])].join(" "),
    kind: options.harness ? kit.profile.kind : "runner command",
    passed: checks.every((c) => c.status !== "fail"),
    checks,
  };
}
