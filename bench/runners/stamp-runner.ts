// A bench runner for the SSE benchmarks: speaks the runner stdio protocol and, on `prompt`, emits 200-byte
// `assistant.delta` frames whose text starts with the moment they were written (process.hrtime in ns, which is
// CLOCK_MONOTONIC: comparable across processes on one machine), so a watcher in another process can tell
// how long the event took to reach it. The same child feeds Brain (the subject) and the raw relay (baseline).
//
// Prompt texts:
//   "paced N HZ"   N deltas, HZ per second, each stamped as it is written (latency).
//   "flood N"      N deltas as fast as the pipe takes them, BATCH frames per write (throughput).
import { once } from "node:events";
import { decodeBrainFrame } from "../../src/protocol/frames.js";
import { encodeLine, LineSplitter } from "../../src/protocol/ndjson.js";
import type { BrainToRunnerFrame } from "../../src/protocol/runner.js";
import { padFor } from "../lib/frames.js";

const BATCH = 320;
const STAMP_DIGITS = 20;

const out = process.stdout;
out.on("error", () => process.exit(0)); // EPIPE: the host went away
out.setMaxListeners(0); // the turns of many attachments may wait for the same drain

const send = (frame: unknown) => out.write(encodeLine(frame));

async function write(data: string): Promise<void> {
  if (!out.write(data)) await once(out, "drain");
}

/** A function giving the 200-byte delta line for a stamp (the frame's other fields are fixed per turn). */
function deltaLine(attachment: string, turn: string): (stamp: bigint) => string {
  const build = (text: string) => ({ attachment, turn, event: "assistant.delta", data: { text } });
  const pad = padFor((p) => build(`${"0".repeat(STAMP_DIGITS)} ${p}`));
  return (stamp) => encodeLine(build(`${stamp.toString().padStart(STAMP_DIGITS, "0")} ${pad}`));
}

async function paced(attachment: string, turn: string, n: number, hz: number): Promise<void> {
  const line = deltaLine(attachment, turn);
  const periodNs = BigInt(Math.round(1e9 / hz));
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const due = t0 + BigInt(i) * periodNs;
    const wait = Number(due - process.hrtime.bigint()) / 1e6;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await write(line(process.hrtime.bigint()));
  }
}

async function flood(attachment: string, turn: string, n: number): Promise<void> {
  const line = deltaLine(attachment, turn);
  for (let left = n; left > 0; left -= BATCH) {
    const stamp = process.hrtime.bigint();
    await write(line(stamp).repeat(Math.min(BATCH, left)));
  }
}

async function handle(frame: BrainToRunnerFrame): Promise<void> {
  if (!("method" in frame)) return;
  const { attachment, id } = frame;
  switch (frame.method) {
    case "prompt": {
      const [mode, a = "0", b = "100"] = frame.params.text.trim().split(/\s+/);
      if (mode === "paced") await paced(attachment, frame.turn, Number(a), Number(b));
      else await flood(attachment, frame.turn, Number(a));
      send({
        attachment,
        turn: frame.turn,
        event: "assistant.message",
        data: { text: "done", stop_reason: "stop" },
      });
      send({ attachment, turn: frame.turn, id, result: {} });
      return;
    }
    case "steer":
    case "interrupt":
      send({ attachment, turn: frame.turn, id, result: {} });
      return;
    case "checkpoint":
      send({ attachment, id, result: [] });
      return;
    default:
      send({ attachment, id, result: {} });
  }
}

const splitter = new LineSplitter((line) => {
  handle(decodeBrainFrame(line)).catch((err: Error) => {
    process.stderr.write(`stamp runner: ${err.stack ?? err.message}\n`);
    process.exit(1);
  });
});
process.stdin.on("data", (chunk: Buffer) => splitter.push(chunk));
process.stdin.on("end", () => process.exit(0));
