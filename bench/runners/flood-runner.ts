// A bench runner that speaks the runner stdio protocol and does nothing but load: on `prompt` it either floods
// 200-byte `assistant.delta` frames or issues reverse `tool.call`s of the `echo` tool, then sends an
// `assistant.message` and answers the prompt. Driven the same way by Brain (the subject) and by the raw
// baselines, so both sides of every comparison talk to the very same child.
//
// Prompt texts:
//   "flood N"        N deltas of exactly 200 bytes each, written in batches of BATCH frames per write.
//   "tools K C"      K echo tool calls (200-byte frames), at most C in flight. The assistant.message text is
//                    JSON {"ns": <first call sent → last result received>, "calls": K, "errors": E}.
import { once } from "node:events";
import { decodeBrainFrame } from "../../src/protocol/frames.js";
import { encodeLine, LineSplitter } from "../../src/protocol/ndjson.js";
import type { BrainToRunnerFrame, ToolResult } from "../../src/protocol/runner.js";
import { paddedLine, padFor } from "../lib/frames.js";

/** Frames per write(2): 320 × 200 B = 64 000 B, about one pipe buffer. */
const BATCH = 320;

const out = process.stdout;
out.on("error", () => process.exit(0)); // EPIPE: the host went away

function send(frame: unknown): void {
  out.write(encodeLine(frame));
}

/** Writes and waits for 'drain' only when the stream asks for it. */
async function write(data: Buffer | string): Promise<void> {
  if (!out.write(data)) await once(out, "drain");
}

async function flood(attachment: string, turn: string, n: number): Promise<string> {
  const line = paddedLine((text) => ({ attachment, turn, event: "assistant.delta", data: { text } }));
  const batch = Buffer.from(line.repeat(BATCH));
  let left = n;
  for (; left >= BATCH; left -= BATCH) await write(batch);
  if (left > 0) await write(line.repeat(left));
  return `flooded ${n}`;
}

const toolWaits = new Map<string, (result: ToolResult) => void>();
let nextCall = 0;

async function tools(attachment: string, turn: string, k: number, inFlight: number): Promise<string> {
  // Fixed-width ids (5 base-36 digits) keep every frame the same length, so one padding fits all.
  const id = (prefix: string, n: number) => `${prefix}${n.toString(36).padStart(5, "0")}`;
  const frame = (n: number, value: string) => ({
    attachment,
    turn,
    id: id("c", n),
    method: "tool.call",
    params: { id: id("t", n), name: "echo", arguments: { value } },
  });
  const value = padFor((pad) => frame(0, pad));
  let issued = 0;
  let errors = 0;
  const worker = async () => {
    while (issued < k) {
      issued++;
      const n = nextCall++;
      const result = await new Promise<ToolResult>((resolve) => {
        toolWaits.set(id("c", n), resolve);
        send(frame(n, value));
      });
      if (result.is_error || result.content[0]?.text !== value) errors++;
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Math.max(1, Math.min(inFlight, k)) }, worker));
  const ns = Number(process.hrtime.bigint() - t0);
  return JSON.stringify({ ns, calls: k, errors });
}

async function prompt(attachment: string, turn: string, text: string): Promise<string> {
  const [mode, a = "0", b = "1"] = text.trim().split(/\s+/);
  if (mode === "flood") return flood(attachment, turn, Number(a));
  if (mode === "tools") return tools(attachment, turn, Number(a), Number(b));
  return `unknown prompt ${JSON.stringify(text)}; expected "flood N" or "tools K C"`;
}

async function handle(frame: BrainToRunnerFrame): Promise<void> {
  if (!("method" in frame)) {
    toolWaits.get(frame.id)?.(frame.result);
    toolWaits.delete(frame.id);
    return;
  }
  const { attachment, id } = frame;
  switch (frame.method) {
    case "open":
      return send({ attachment, id, result: {} });
    case "prompt": {
      const { turn } = frame;
      const said = await prompt(attachment, turn, frame.params.text);
      send({ attachment, turn, event: "assistant.message", data: { text: said, stop_reason: "stop" } });
      return send({ attachment, turn, id, result: {} });
    }
    case "steer":
    case "interrupt":
      return send({ attachment, turn: frame.turn, id, result: {} });
    case "checkpoint":
      return send({ attachment, id, result: [] });
    case "detach":
      return send({ attachment, id, result: {} });
  }
}

const splitter = new LineSplitter((line) => {
  handle(decodeBrainFrame(line)).catch((err: Error) => {
    process.stderr.write(`flood runner: ${err.stack ?? err.message}\n`);
    process.exit(1);
  });
});
process.stdin.on("data", (chunk: Buffer) => splitter.push(chunk));
process.stdin.on("end", () => process.exit(0));
