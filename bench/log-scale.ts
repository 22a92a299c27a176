// The event log at scale (issue 16), each figure against its target:
//   - bytes on disk per streamed character, for deltas of 2–20 characters committed one at a time (model pace:
//     each delta its own group commit, the worst case for sharing an envelope), the relay's verbatim deltas;
//   - opening a 1,000,000-event session for a new turn (open, open state, first append) in a fresh process, time
//     and RSS growth against an empty session opened the same way in the same run;
//   - reading 10 events after a cursor near the end of that log.
// The log rolls into segments as a real one does (8 MiB each), so the open reads its last segment.
// --quick builds a 200,000-event log instead, and says so.
import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { NewEvent } from "../src/protocol/events.js";
import { decodeRunnerFrameFast } from "../src/protocol/fast-frames.js";
import { JsonlEventLog } from "../src/store/fs/index.js";
import { listSealed } from "../src/store/fs/segments.js";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { type BenchRow, log, type Sample, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const childPath = () => fileURLToPath(new URL("./runners/log-open.js", import.meta.url));
const MiB = 1024 * 1024;
const SESSION = "bench-log";

interface OpenResult {
  openMs: number;
  openBytes: number;
  readMs: number;
  events: number;
}

function openInChild(file: string): Promise<OpenResult> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [childPath(), file, SESSION], { timeout: 300_000 }, (err, out, stderr) =>
      err ? reject(new Error(`log-open: ${err.message}\n${stderr}`)) : resolve(JSON.parse(out.trim())),
    ),
  );
}

/** A delta as the relay gets it from a runner frame (its text kept verbatim). */
function frameDelta(text: string, turn: string): NewEvent {
  const frame = decodeRunnerFrameFast(
    `{"attachment":"a","turn":"${turn}","event":"assistant.delta","data":{"text":"${text}"}}`,
  );
  if (!("event" in frame)) throw new Error("not a delta frame");
  return { type: frame.event, turn: frame.turn, data: frame.data } as NewEvent;
}

/** Deterministic word-like deltas of 2–20 characters. */
function deltaTexts(n: number): string[] {
  let x = 12345;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const len = 2 + (x % 19);
    out.push(`${"abcdefghij klmnopqrst".repeat(1).slice(0, len)}`);
  }
  return out;
}

async function bytesPerChar(dir: string, n: number): Promise<number> {
  const file = path.join(dir, `stream-${n}.jsonl`);
  const eventLog = await JsonlEventLog.open(file, SESSION);
  const turn = "0b6c3f1e-5a7d-4c2b-9e8f-1a2b3c4d5e6f";
  await eventLog.append([{ type: "turn.started", turn, data: {} }]);
  const before = (await stat(file)).size;
  let chars = 0;
  for (const text of deltaTexts(n)) {
    await eventLog.append([frameDelta(text, turn)]);
    chars += text.length;
  }
  const bytes = (await stat(file)).size - before;
  await eventLog.close();
  return bytes / chars;
}

/** A long session: turns of a prompt, 200 deltas, the message and the settle, written in big batches. */
async function buildLog(file: string, events: number): Promise<void> {
  const eventLog = await JsonlEventLog.open(file, SESSION, undefined, { idleMs: Number.POSITIVE_INFINITY });
  const texts = deltaTexts(200);
  let written = 0;
  for (let t = 0; written < events; t++) {
    const turn = `turn-${t}`;
    const batch: NewEvent[] = [
      { type: "user.prompt", turn, data: { text: `prompt ${t}` } },
      { type: "turn.started", turn, data: {} },
    ];
    for (const text of texts) batch.push({ type: "assistant.delta", turn, data: { text } });
    batch.push({ type: "assistant.message", turn, data: { text: texts.join("") } } as NewEvent);
    batch.push({ type: "turn.settled", turn, data: { status: "completed" } });
    const take = batch.slice(0, events - written);
    await eventLog.append(take);
    written += take.length;
  }
  await eventLog.close();
}

const sample = (value: number): Sample => ({ value, foreign: Number.NaN });

export async function logScaleBench(opts: BenchOptions): Promise<BenchRow[]> {
  const events = opts.quick ? 200_000 : 1_000_000;
  const rounds = opts.quick ? 1 : 2;
  const dir = await makeTemp("log-scale");
  try {
    const perChar: Sample[] = [];
    for (let r = 0; r < rounds; r++)
      perChar.push(sample(await bytesPerChar(dir, opts.quick ? 2_000 : 10_000)));
    log(`log-scale: ${perChar.map((s) => s.value.toFixed(2)).join(", ")} bytes per streamed character`);
    const big = path.join(dir, "big.jsonl");
    const empty = path.join(dir, "empty.jsonl");
    await buildLog(big, events);
    const segments = await listSealed(big);
    let bytes = (await stat(big)).size;
    for (const s of segments) bytes += (await stat(s.path)).size;
    log(
      `log-scale: built a ${events}-event log of ${(bytes / MiB).toFixed(0)} MiB in ${segments.length + 1} segments`,
    );
    const openMs: Sample[] = [];
    const openMem: Sample[] = [];
    const readMs: Sample[] = [];
    for (let r = 0; r < rounds + 1; r++) {
      const e = await openInChild(empty);
      const b = await openInChild(big);
      openMs.push(sample(b.openMs - e.openMs));
      openMem.push(sample((b.openBytes - e.openBytes) / MiB));
      readMs.push(sample(b.readMs));
      log(
        `  open: ${b.openMs.toFixed(1)} ms vs ${e.openMs.toFixed(1)} ms empty, +${(b.openBytes / MiB).toFixed(1)} vs +${(e.openBytes / MiB).toFixed(1)} MiB; read 10 near the end ${b.readMs.toFixed(2)} ms`,
      );
    }
    const size = opts.quick ? " (--quick: a 200,000-event log)" : "";
    return [
      timeRow(
        {
          id: "log-bytes-per-char",
          what: "event log bytes per streamed character, deltas of 2–20 chars, one delta per commit",
          unit: "B/char",
          notes: ["the file's growth over the turn's deltas, divided by their characters (was 27.6)"],
        },
        { subject: perChar },
        { kind: "max", value: 3, of: "median" },
      ),
      timeRow(
        {
          id: "log-open-1m",
          what: `open a 1,000,000-event session for a new turn, time beyond an empty one${size}`,
          unit: "ms",
          notes: ["fresh process each; open + open state + first append"],
        },
        { subject: openMs },
        { kind: "max", value: 100, of: "median" },
      ),
      timeRow(
        {
          id: "log-open-1m-memory",
          what: `open a 1,000,000-event session for a new turn, RSS beyond an empty one${size}`,
          unit: "MiB",
          notes: ["fresh process each; RSS growth over the open"],
        },
        { subject: openMem },
        { kind: "max", value: 32, of: "median" },
      ),
      timeRow(
        {
          id: "log-read-after-cursor",
          what: `read 10 events after a cursor near the end of a 1,000,000-event log${size}`,
          unit: "ms",
          notes: ["in the process that opened it"],
        },
        { subject: readMs },
        { kind: "max", value: 20, of: "median" },
      ),
    ];
  } finally {
    await removeTemp(dir);
  }
}
