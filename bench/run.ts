// `npm run bench`: Brain's hot paths measured side by side with raw baselines on this machine, as ratios.
//
//   node dist/bench/run.js [--quick] [--json] [--reps N] [--only NAME,...]   (names: see BENCHES)
//
// The machine is shared and noisy, so every comparison interleaves baseline and subject runs and reports the
// median and min – max of each, the ratio of medians (and the min – max of the per-pair ratios), and the CPU
// other processes used meanwhile. Progress goes to stderr; the table to stdout, or with --json one JSON
// document to stdout (and the table to stderr).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import os from "node:os";
import { parseArgs } from "node:util";
import { acpPeerBench } from "./acp-peer.js";
import { apiTurnBench } from "./api-turn.js";
import { appendsBench } from "./appends.js";
import { checkpointBench } from "./checkpoint.js";
import { cliOverheadBench } from "./cli-overhead.js";
import { cliStartBench } from "./cli-start.js";
import { clusterBench } from "./cluster.js";
import { clusterNodesBench } from "./cluster-nodes.js";
import { dockerBench } from "./docker.js";
import { extEventsBench } from "./ext-events.js";
import { firstDeltaBench } from "./first-delta.js";
import { installCleanup, watched } from "./lib/cleanup.js";
import { type BenchRow, log } from "./lib/measure.js";
import { fmtCount, fmtMs, fmtPct, fmtSummary, type Summary } from "./lib/stats.js";
import { renderTable } from "./lib/table.js";
import { BENCH_IO_THREADS } from "./lib/user-env.js";
import { logScaleBench } from "./log-scale.js";
import { mcpToolsBench } from "./mcp-tools.js";
import type { BenchOptions } from "./options.js";
import { piColdStartBench } from "./pi-cold-start.js";
import { piTurnBench } from "./pi-turn.js";
import { relayBench } from "./relay.js";
import { scaleBench } from "./scale.js";
import { secretScanBench } from "./secret-scan.js";
import { sseFanoutBench } from "./sse-fanout.js";
import { sseLoadBench } from "./sse-load.js";
import { toolRoundTripBench, toolRoundTripBudgetMs } from "./tool-roundtrip.js";

const BENCHES: Record<string, (opts: BenchOptions) => Promise<BenchRow[]>> = {
  relay: relayBench,
  tools: toolRoundTripBench,
  appends: appendsBench,
  checkpoint: checkpointBench,
  "secret-scan": secretScanBench,
  "pi-turn": piTurnBench,
  "pi-cold-start": piColdStartBench,
  "api-turn": apiTurnBench,
  "mcp-tools": mcpToolsBench,
  "ext-events": extEventsBench,
  "cli-overhead": cliOverheadBench,
  sse: sseFanoutBench,
  "sse-load": sseLoadBench,
  "cli-start": cliStartBench,
  "first-delta": firstDeltaBench,
  scale: scaleBench,
  "log-scale": logScaleBench,
  "acp-peer": acpPeerBench,
  docker: dockerBench,
  cluster: clusterBench,
  "cluster-nodes": clusterNodesBench,
};

/** What a section's watchdog allows, from the work it is asked to do, for the sections that say. */
const BUDGETS: Record<string, (opts: BenchOptions) => number> = {
  tools: toolRoundTripBudgetMs,
  // Its one-watcher row alone paces 1,000 deltas at 100/s per side and round: 150 s of a full run's 5 rounds.
  sse: (opts) => (opts.quick ? 240_000 : 600_000),
};

const USAGE = `usage: node dist/bench/run.js [--quick] [--json] [--reps N] [--only ${Object.keys(BENCHES).join(",")}]`;

/** A command line the bench cannot run: said with the usage, without a stack, exit code 2. */
class UsageError extends Error {}

const OPTIONS = {
  quick: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  reps: { type: "string" },
  only: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

function parsedArgs() {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (err) {
    const { message, code } = err as Error & { code?: string };
    // `--only relay tools` leaves "tools" as a positional: the list is one argument, comma-separated.
    const hint =
      code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL" ? " (--only takes one list: --only relay,tools)" : "";
    throw new UsageError(`${message}${hint}`);
  }
}

function options() {
  const { values } = parsedArgs();
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const reps = values.reps === undefined ? (values.quick ? 2 : 5) : Number(values.reps);
  if (!Number.isInteger(reps) || reps < 1)
    throw new UsageError(`--reps must be a positive integer, not "${values.reps}"`);
  const only = values.only?.split(",").map((s) => s.trim()) ?? Object.keys(BENCHES);
  for (const name of only) if (!(name in BENCHES)) throw new UsageError(`unknown benchmark "${name}"`);
  return { quick: values.quick, json: values.json, reps, only };
}

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

function targetText(row: BenchRow): string {
  const t = row.target;
  if (t.kind === "min-ratio") return `≥ ${fmtPct(t.ratio)}`;
  if (t.kind === "max-ratio") return `≤ ${t.ratio}×`;
  if (t.kind === "max") return `${t.of} ≤ ${row.unit === "ms" ? fmtMs(t.value) : `${t.value} ${row.unit}`}`;
  return "—";
}

function figure(row: BenchRow, s: Summary | undefined): string {
  if (!s) return "—";
  if (row.unit === "ms") return `${fmtSummary(s, fmtMs)}; p99 ${fmtMs(s.p99)}`;
  if (row.unit !== "events/s" && row.unit !== "RT/s" && row.unit !== "lines/s")
    return fmtSummary(s, (v) => (Number.isInteger(v) ? String(v) : v.toPrecision(3)));
  return fmtSummary(s, fmtCount);
}

function ratioText(row: BenchRow): string {
  if (row.ratio === undefined) return "—";
  const pairs = row.pairRatios;
  if (row.unit === "ms") {
    const range = pairs && pairs.n > 1 ? ` (${pairs.min.toFixed(2)} – ${pairs.max.toFixed(2)})` : "";
    return `${row.ratio.toFixed(2)}×${range}`;
  }
  return pairs ? `${fmtPct(row.ratio)} (${fmtPct(pairs.min)} – ${fmtPct(pairs.max)})` : fmtPct(row.ratio);
}

/** Every row with a target, one line each: what issue 12's table and scale figures ask, and where they stand. */
function scorecard(rows: BenchRow[]): string {
  const targeted = rows.filter((row) => row.verdict !== "info");
  if (targeted.length === 0) return "";
  const cells = targeted.map((row) => [
    row.id,
    // An absolute target is judged on the figure itself; a ratio target on the ratio.
    row.target.kind === "max" || row.ratio === undefined ? figure(row, row.subject) : ratioText(row),
    targetText(row),
    row.verdict,
  ]);
  const passed = targeted.filter((row) => row.verdict === "PASS").length;
  return [
    `targets: ${passed} of ${targeted.length} met`,
    renderTable(
      ["row", "ratio to its baseline, or the figure for an absolute target", "target", "result"],
      cells,
    ),
    "",
  ].join("\n");
}

interface Meta {
  date: string;
  mode: "quick" | "full";
  reps: number;
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  loadStart: string;
  loadEnd: string;
  /** Wall time of the whole run and of each benchmark, in seconds. */
  seconds: number;
  sections: Record<string, number>;
  tmpdir: string;
  /** libuv's thread pool size, as `brain serve` sets it. */
  ioThreads: number;
}

function render(rows: BenchRow[], meta: Meta): string {
  const headers = [
    "benchmark",
    "unit",
    "Brain: median (min – max)",
    "baseline: median (min – max)",
    "ratio (pairs)",
    "target",
    "result",
    "foreign load",
  ];
  const cells = rows.map((row) => [
    row.what,
    row.unit,
    figure(row, row.subject),
    figure(row, row.baseline),
    ratioText(row),
    targetText(row),
    row.verdict === "info" ? "(context)" : row.verdict,
    row.foreign.n === 0
      ? "n/a"
      : `${row.foreign.median.toFixed(2)} (max ${row.foreign.max.toFixed(2)}) cores`,
  ]);
  const notes = rows.map((row) => {
    const extra = Object.entries(row.extra).map(
      ([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toPrecision(3)}`,
    );
    const lines = [
      `- ${row.id}: baseline = ${row.baselineWhat ?? "none"}`,
      ...row.notes.map((n) => `    ${n}`),
    ];
    if (extra.length) lines.push(`    Brain side, medians per run: ${extra.join(", ")}`);
    return lines.join("\n");
  });
  return [
    `Brain bench (${meta.mode}, ${meta.reps} interleaved rounds per comparison), ${meta.date}`,
    `node ${meta.node} on ${meta.platform}, ${meta.cpus} × ${meta.cpuModel}; temp dirs under ${meta.tmpdir}; ${meta.ioThreads} I/O threads (as brain serve sizes its pool)`,
    `load average (1/5/15 min): ${meta.loadStart} at start, ${meta.loadEnd} at end`,
    `run took ${meta.seconds} s (${Object.entries(meta.sections)
      .map(([name, seconds]) => `${name} ${seconds} s`)
      .join(", ")})`,
    "foreign load = CPU used by processes other than this bench and its children while the timed part ran",
    "",
    renderTable(headers, cells),
    "",
    scorecard(rows),
    ...notes,
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const opts = options();
  installCleanup();
  const started = Date.now();
  const loadStart = loadavg();
  log(`bench: ${opts.only.join(", ")}; ${opts.quick ? "quick" : "full"}; load average ${loadStart}`);
  const rows: BenchRow[] = [];
  const sections: Record<string, number> = {};
  for (const name of opts.only) {
    const t0 = Date.now();
    const section = { quick: opts.quick, reps: opts.reps };
    // A stuck child must not hang the run; a busy shared machine must not cut a healthy one short: a section
    // that says what its work allows (BUDGETS) gets that, the others a fixed figure.
    const budget = BUDGETS[name]?.(section) ?? (opts.quick ? 120_000 : 300_000);
    rows.push(...(await watched(`the ${name} section`, budget, () => BENCHES[name]!(section))));
    sections[name] = Number(((Date.now() - t0) / 1000).toFixed(1));
    log(`${name}: done in ${sections[name]} s`);
  }
  const meta: Meta = {
    date: new Date().toISOString(),
    mode: opts.quick ? "quick" : "full",
    reps: opts.reps,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown CPU",
    loadStart,
    loadEnd: loadavg(),
    seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
    sections,
    tmpdir: os.tmpdir(),
    ioThreads: Number(process.env.UV_THREADPOOL_SIZE),
  };
  const table = render(rows, meta);
  if (opts.json) {
    process.stderr.write(table);
    process.stdout.write(`${JSON.stringify({ meta, rows }, null, 2)}\n`);
  } else {
    process.stdout.write(table);
  }
}

/**
 * Brain is hosted in this process as `brain serve` hosts it, with the daemon's thread pool (bin/io-threads.js).
 * libuv sized the pool before this module ran, so a run started without it runs again with it.
 */
function underDaemonThreads(): boolean {
  if (process.env.UV_THREADPOOL_SIZE) return true;
  const { reserveIoThreads } = createRequire(import.meta.url)("../../bin/io-threads.js") as {
    reserveIoThreads(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  };
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...reserveIoThreads({ ...process.env }), [BENCH_IO_THREADS]: "1" },
  });
  process.exitCode = again.status ?? 1;
  return false;
}

if (underDaemonThreads())
  main().catch((err: Error) => {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`bench: ${err.stack ?? err.message}\n`);
    process.exitCode = 1;
    process.exit(1);
  });
