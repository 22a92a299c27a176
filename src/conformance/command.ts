// `brain conformance [--json] [--open-timeout S] [--interrupt-grace S] -- CMD ARGS...`
import { parseArgs } from "node:util";
import { type KitReport, runConformance } from "./kit.js";

export async function conformanceCommand(argv: string[]): Promise<number> {
  const dashes = argv.indexOf("--");
  const flags = dashes === -1 ? argv : argv.slice(0, dashes);
  const [command, ...args] = dashes === -1 ? [] : argv.slice(dashes + 1);
  const { values } = parseArgs({
    args: flags,
    options: {
      json: { type: "boolean" },
      "open-timeout": { type: "string" },
      "interrupt-grace": { type: "string" },
    },
    strict: true,
  });
  if (!command) {
    process.stderr.write(
      "usage: brain conformance [--json] -- CMD ARGS...   (e.g. -- node runners/pi/dist/main.js)\n",
    );
    return 2;
  }
  const seconds = (value: string | undefined) => (value ? Number(value) * 1000 : undefined);
  const report = await runConformance({
    command,
    args,
    cwd: process.cwd(),
    openTimeoutMs: seconds(values["open-timeout"]),
    interruptGraceMs: seconds(values["interrupt-grace"]),
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : table(report));
  return report.passed ? 0 : 1;
}

function table(report: KitReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const mark = { pass: "PASS", fail: "FAIL", skip: "skip" } as const;
  const lines = report.checks.map((c) => `${mark[c.status]}  ${c.name.padEnd(width)}  ${c.detail}`);
  const failed = report.checks.filter((c) => c.status === "fail").length;
  const summary = report.passed ? "conformance: all checks passed" : `conformance: ${failed} check(s) failed`;
  return `runner: ${report.runner.join(" ")}\n${lines.join("\n")}\n${summary}\n`;
}
