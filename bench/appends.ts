// 3. Durable appends: JsonlEventLog.append (group commit) of 200-byte events, one event per call (as
// Session.emit does), up to MAX_IN_FLIGHT appends in flight. Baselines write the same lines with fs.writeSync,
// one write and one fdatasync per batch, in the batch sizes the log itself formed in the latest run:
//   - "raw JSONL": JSON.stringify of each event inside the timed part (any appender must serialize);
//   - "I/O only": the lines pre-built before timing (the disk floor alone), shown for context.
import { randomUUID } from "node:crypto";
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import type { NewEvent } from "../src/protocol/events.js";
import { JsonlEventLog } from "../src/store/fs/index.js";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { padFor } from "./lib/frames.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed } from "./lib/measure.js";
import { median } from "./lib/stats.js";
import type { BenchOptions } from "./options.js";

const MAX_IN_FLIGHT = 16_384;
/** Appends issued per event-loop turn before yielding to I/O. */
const CHUNK = 1_000;
const SESSION = "bench-appends";

/** Issues `n` appends flat out, at most MAX_IN_FLIGHT unresolved; resolves when all are durable. */
function flatOut(log: JsonlEventLog, n: number, event: NewEvent): Promise<void> {
  return new Promise((resolve, reject) => {
    let issued = 0;
    let done = 0;
    let inFlight = 0;
    let paused = false;
    const onDone = () => {
      inFlight--;
      if (++done === n) resolve();
      else if (paused && inFlight <= MAX_IN_FLIGHT / 2) {
        paused = false;
        setImmediate(pump);
      }
    };
    const pump = () => {
      const stop = Math.min(n, issued + CHUNK);
      while (issued < stop && inFlight < MAX_IN_FLIGHT) {
        issued++;
        inFlight++;
        log.append([event]).then(onDone, reject);
      }
      if (issued < n) {
        if (inFlight < MAX_IN_FLIGHT) setImmediate(pump);
        else paused = true;
      }
    };
    pump();
  });
}

function writeAllSync(fd: number, buf: Buffer): void {
  for (let done = 0; done < buf.length; ) done += writeSync(fd, buf, done, buf.length - done);
}

export async function appendsBench(opts: BenchOptions): Promise<BenchRow[]> {
  const n = opts.quick ? 50_000 : 100_000;
  const turn = randomUUID();
  // Padded so the stored line ({"seq":N,"ts":…,"session":…,"turn":…,"type":…,"data":…}) is 200 B at 6-digit seqs.
  const line = (seq: number, ts: string, text: string) => ({
    seq,
    ts,
    session: SESSION,
    turn,
    type: "assistant.delta",
    data: { text },
  });
  const text = padFor((pad) => line(100_000, new Date().toISOString(), pad));
  const event: NewEvent = { type: "assistant.delta", turn, data: { text } };
  log(
    `appends: ${n} appends of 200-byte events per run, up to ${MAX_IN_FLIGHT} in flight, ${opts.reps} rounds`,
  );

  let batches: number[] = [];
  const runLog = async (count: number): Promise<Sample> => {
    const dir = await makeTemp("appends-log");
    try {
      const eventLog = await JsonlEventLog.open(path.join(dir, "events.jsonl"), SESSION);
      const sizes: number[] = [];
      eventLog.subscribe((batch) => sizes.push(batch.length));
      const { seconds, foreign } = await timed(() => flatOut(eventLog, count, event));
      await eventLog.close();
      batches = sizes;
      return {
        value: count / seconds,
        foreign,
        extra: { batch_lines: median(sizes), commits: sizes.length },
      };
    } finally {
      await removeTemp(dir);
    }
  };

  const runRaw = async (serialize: boolean): Promise<Sample> => {
    const dir = await makeTemp("appends-raw");
    const fd = openSync(path.join(dir, "events.jsonl"), "w");
    try {
      const sizes = batches;
      const total = sizes.reduce((a, b) => a + b, 0);
      const build = (from: number, count: number, ts: string) => {
        const parts: string[] = [];
        for (let seq = from; seq < from + count; seq++)
          parts.push(`${JSON.stringify(line(seq, ts, text))}\n`);
        return Buffer.from(parts.join(""));
      };
      const prebuilt: Buffer[] = [];
      if (!serialize) {
        const ts = new Date().toISOString();
        let seq = 1;
        for (const size of sizes) {
          prebuilt.push(build(seq, size, ts));
          seq += size;
        }
      }
      const { seconds, foreign } = await timed(async () => {
        let seq = 1;
        for (const [i, size] of sizes.entries()) {
          const buf = serialize ? build(seq, size, new Date().toISOString()) : prebuilt[i]!;
          seq += size;
          writeAllSync(fd, buf);
          fdatasyncSync(fd);
        }
      });
      return { value: total / seconds, foreign };
    } finally {
      closeSync(fd);
      await removeTemp(dir);
    }
  };

  await runLog(Math.min(n, 30_000)); // warm-up; also gives the first batch sizes
  const samples = await interleave("appends", opts.reps, {
    subject: () => runLog(n),
    baseline: () => runRaw(true),
    io_only: () => runRaw(false),
  });
  const what = "durable appends of 200 B events (JsonlEventLog group commit)";
  const notes = [
    `${n} appends, one event per append() call, up to ${MAX_IN_FLIGHT} in flight; batches = the log's own, replayed`,
  ];
  return [
    rateRow(
      {
        id: "appends",
        what,
        unit: "events/s",
        baselineWhat: "JSON.stringify per line + writeSync + fdatasync per batch (context)",
        notes,
      },
      { subject: samples.subject, baseline: samples.baseline },
      { kind: "none" },
    ),
    rateRow(
      {
        id: "appends-io-floor",
        what: `${what}, vs the disk alone`,
        unit: "events/s",
        baselineWhat: "pre-built lines: writeSync + fdatasync per batch",
        notes: ["issue 12's row: the disk floor, the same batches with every line built before timing"],
      },
      { subject: samples.subject, baseline: samples.io_only },
      { kind: "min-ratio", ratio: 0.4 },
    ),
  ];
}
