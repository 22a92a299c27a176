// Scale on one host (issue 12), each figure from a fresh child process (bench/runners/scale-host.ts):
//   1,000 sessions attached to one shared runner host: RSS growth of Brain and of the runner (target: Brain
//   < 128 MiB for the 1,000); 1,000 idle sessions in the daemon: file descriptors held (target: none).
// --quick opens 250 sessions and states the figures per 1,000 (growth per session × 1,000).
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { type BenchRow, log, type Sample, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const hostPath = () => fileURLToPath(new URL("./runners/scale-host.js", import.meta.url));
const MiB = 1024 * 1024;

interface ScaleResult {
  sessions: number;
  brainBytes: number;
  runnerBytes: number;
  fds: number;
  seconds: number;
}

async function runHost(mode: "attached" | "idle", n: number): Promise<ScaleResult> {
  const home = await makeTemp(`scale-${mode}`);
  try {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [hostPath(), mode, String(n), home],
        { timeout: 300_000, maxBuffer: 1 << 20 },
        (err, out, stderr) =>
          err ? reject(new Error(`scale ${mode}: ${err.message}\n${stderr}`)) : resolve(out),
      ),
    );
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as ScaleResult;
  } finally {
    await removeTemp(home);
  }
}

/** A figure from a child run: no foreign-load probe over another process's run. */
const sample = (value: number, extra?: Record<string, number>): Sample => ({
  value,
  foreign: Number.NaN,
  ...(extra ? { extra } : {}),
});

export async function scaleBench(opts: BenchOptions): Promise<BenchRow[]> {
  const n = opts.quick ? 250 : 1_000;
  const rounds = opts.quick ? 1 : 2;
  const per1000 = 1_000 / n;
  log(
    `scale: ${n} sessions attached to one shared runner, and ${n} idle sessions in the daemon, ${rounds} round(s)`,
  );
  const brainGrowth: Sample[] = [];
  const runnerGrowth: Sample[] = [];
  const idleFds: Sample[] = [];
  const idleRss: Sample[] = [];
  for (let round = 0; round < rounds; round++) {
    const attached = await runHost("attached", n);
    log(
      `  scale attached: Brain +${(attached.brainBytes / MiB).toFixed(1)} MiB, runner +${(attached.runnerBytes / MiB).toFixed(1)} MiB for ${n} sessions (${attached.seconds.toFixed(1)} s)`,
    );
    brainGrowth.push(
      sample((attached.brainBytes / MiB) * per1000, { kib_per_session: attached.brainBytes / 1024 / n }),
    );
    runnerGrowth.push(
      sample((attached.runnerBytes / MiB) * per1000, { kib_per_session: attached.runnerBytes / 1024 / n }),
    );
    const idle = await runHost("idle", n);
    log(`  scale idle: ${idle.fds} more fds, +${(idle.brainBytes / MiB).toFixed(1)} MiB for ${n} sessions`);
    idleFds.push(sample(idle.fds / n, { fds: idle.fds }));
    idleRss.push(sample((idle.brainBytes / MiB) * per1000, { kib_per_session: idle.brainBytes / 1024 / n }));
  }
  const scaled = n === 1_000 ? "" : ` (${n} opened, × ${per1000} to state it per 1,000)`;
  return [
    timeRow(
      {
        id: "scale-attached-brain",
        what: "1,000 sessions attached to one shared runner host: Brain RSS growth",
        unit: "MiB",
        notes: [
          `after a full GC, from 1 session to ${n} + 1${scaled}; each session opened (runner attached)`,
        ],
      },
      { subject: brainGrowth },
      { kind: "max", value: 128, of: "median" },
    ),
    timeRow(
      {
        id: "scale-attached-runner",
        what: "1,000 sessions attached to one shared runner host: runner RSS growth (context)",
        unit: "MiB",
        notes: [`the flood runner (runner SDK) holding one attachment per session${scaled}`],
      },
      { subject: runnerGrowth },
      { kind: "none" },
    ),
    timeRow(
      {
        id: "scale-idle-fds",
        what: "1,000 idle sessions in the daemon: file descriptors held per idle session",
        unit: "fds/session",
        notes: [
          `${n} sessions created through the daemon and left idle; fds of the process before and after`,
        ],
      },
      { subject: idleFds },
      { kind: "max", value: 0.01, of: "median" },
    ),
    timeRow(
      {
        id: "scale-idle-rss",
        what: "1,000 idle sessions in the daemon: RSS growth (context)",
        unit: "MiB",
        notes: [`after a full GC${scaled}`],
      },
      { subject: idleRss },
      { kind: "none" },
    ),
  ];
}
