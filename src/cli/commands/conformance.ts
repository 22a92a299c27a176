// `brain conformance [--json] [--harness NAME]... [--open-timeout S] [--interrupt-grace S] [-- CMD ARGS...]`
import { HarnessRegistry } from "../../core/registry.js";
import { parse, refuseExtra, strs, UsageError } from "../args.js";
import { loadConfig } from "../config.js";
import { brainHome, configHarnesses } from "../setup.js";
import type { KitOptions } from "./conformance/context.js";
import { type KitReport, runConformance } from "./conformance/kit.js";

export const usage = `conformance [--json] [--harness NAME]... [--open-timeout S] [--interrupt-grace S] [-- CMD ARGS...]
                              check configured harnesses (--harness, repeatable) or a runner command against
                              the runner protocol and the four verification checks; one table, harness × check`;

export async function command(argv: string[]): Promise<number> {
  const dashes = argv.indexOf("--");
  const flags = dashes === -1 ? argv : argv.slice(0, dashes);
  const [command, ...args] = dashes === -1 ? [] : argv.slice(dashes + 1);
  const { values, positionals } = parse(flags, {
    json: { type: "boolean" },
    harness: { type: "string", multiple: true },
    "open-timeout": { type: "string" },
    "interrupt-grace": { type: "string" },
  });
  refuseExtra(
    positionals,
    0,
    "conformance takes a runner's command after --, e.g. -- node runners/pi/dist/main.js",
  );
  const harnesses = strs(values.harness);
  if (!command && harnesses.length === 0)
    throw new UsageError(
      "conformance needs --harness NAME (one the config offers; see `brain harnesses`) or a runner's command after --, e.g. -- node runners/pi/dist/main.js",
    );
  const seconds = (value: unknown) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(n > 0)) throw new UsageError(`expected a number of seconds, not "${value}"`);
    return n * 1000;
  };
  const common = {
    cwd: process.cwd(),
    openTimeoutMs: seconds(values["open-timeout"]),
    interruptGraceMs: seconds(values["interrupt-grace"]),
  };
  const subjects: KitOptions[] = [];
  if (harnesses.length > 0) {
    const loaded = loadConfig(typeof values.config === "string" ? values.config : undefined);
    // A fresh registry for each Brain the kit starts: a host restart starts its harnesses anew.
    const registry = () => new HarnessRegistry(configHarnesses(loaded, brainHome()).factories);
    const known = registry().names();
    for (const name of harnesses) {
      if (!known.includes(name))
        throw new UsageError(`unknown harness "${name}"; this config offers: ${known.join(", ")}`);
      subjects.push({ ...common, harness: { name, factory: () => registry().get(name) } });
    }
  }
  if (command) subjects.push({ ...common, command, args });
  const reports: KitReport[] = [];
  for (const subject of subjects) {
    const report = await runConformance(subject);
    reports.push(report);
    if (!values.json) process.stdout.write(table(report));
  }
  if (values.json)
    process.stdout.write(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`);
  else if (reports.length > 1) process.stdout.write(matrix(reports));
  return reports.every((r) => r.passed) ? 0 : 1;
}

const MARK = { pass: "PASS", fail: "FAIL", skip: "skip", differs: "DIFF" } as const;

function table(report: KitReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const lines = report.checks.map((c) => `${MARK[c.status]}  ${c.name.padEnd(width)}  ${c.detail}`);
  const failed = report.checks.filter((c) => c.status === "fail").length;
  const summary = report.passed ? "conformance: all checks passed" : `conformance: ${failed} check(s) failed`;
  const differs = report.checks.filter((c) => c.status === "differs").length;
  const note = differs ? ` (${differs} differ by the harness's nature: DIFF says what differed)` : "";
  const who = report.kind === "runner command" ? "runner" : `harness (${report.kind})`;
  return `${who}: ${report.subject}\n${lines.join("\n")}\n${summary}${note}\n\n`;
}

/** One row per harness, one column per check. */
export function matrix(reports: KitReport[]): string {
  const checks = reports[0]?.checks.map((c) => c.name) ?? [];
  const first = Math.max(7, ...reports.map((r) => r.subject.length));
  const widths = checks.map((name) => Math.max(4, name.length));
  const row = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(i === 0 ? first : widths[i - 1]!))
      .join("  ")
      .trimEnd();
  const lines = [row(["harness", ...checks])];
  for (const report of reports) {
    const byName = new Map(report.checks.map((c) => [c.name, MARK[c.status]]));
    lines.push(row([report.subject, ...checks.map((name) => byName.get(name) ?? "-")]));
  }
  return `${lines.join("\n")}\n`;
}
