// `brain conformance [--json] [--open-timeout S] [--interrupt-grace S] -- CMD ARGS...`
import { parse, UsageError } from "../args.js";
import { type KitReport, runConformance } from "./conformance/kit.js";

export const usage = `conformance [--json] [--open-timeout S] [--interrupt-grace S] -- CMD ARGS...
                              check a runner against the runner protocol and the four verification checks`;

export async function command(argv: string[]): Promise<number> {
  const dashes = argv.indexOf("--");
  const flags = dashes === -1 ? argv : argv.slice(0, dashes);
  const [command, ...args] = dashes === -1 ? [] : argv.slice(dashes + 1);
  const { values } = parse(flags, {
    json: { type: "boolean" },
    "open-timeout": { type: "string" },
    "interrupt-grace": { type: "string" },
  });
  if (!command)
    throw new UsageError(
      "conformance needs the runner's command after --, e.g. -- node runners/pi/dist/main.js",
    );
  const seconds = (value: unknown) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(n > 0)) throw new UsageError(`expected a number of seconds, not "${value}"`);
    return n * 1000;
  };
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
