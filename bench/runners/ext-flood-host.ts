// A nui extension host for the ext-events bench: JSON-RPC on stdio that does nothing but load. On harness.run
// with message "flood N" it writes N `harness.event` text notifications of exactly 200 bytes each (320 per
// write), then `done` and the reply. Driven the same way by Brain (the subject) and by the raw baseline.
import { once } from "node:events";
import { LineSplitter } from "../../src/protocol/ndjson.js";
import { paddedLine } from "../lib/frames.js";

/** Frames per write(2): 320 × 200 B = 64 000 B, about one pipe buffer. */
const BATCH = 320;
const out = process.stdout;
out.on("error", () => process.exit(0)); // EPIPE: the host went away

async function write(data: string): Promise<void> {
  if (!out.write(data)) await once(out, "drain");
}

const reply = (id: unknown, result: unknown) => `${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`;
const event = (params: unknown) => `${JSON.stringify({ jsonrpc: "2.0", method: "harness.event", params })}\n`;

async function flood(id: unknown, runId: string, n: number): Promise<void> {
  const line = paddedLine((content) => ({
    jsonrpc: "2.0",
    method: "harness.event",
    params: { runId, type: "text", content },
  }));
  const batch = line.repeat(BATCH);
  let left = n;
  for (; left >= BATCH; left -= BATCH) await write(batch);
  if (left > 0) await write(line.repeat(left));
  await write(event({ runId, type: "done" }) + reply(id, { runId }));
}

const splitter = new LineSplitter((line) => {
  const msg = JSON.parse(line) as {
    id?: unknown;
    method?: string;
    params?: { runId?: string; message?: string };
  };
  switch (msg.method) {
    case "harness.info":
      return void out.write(reply(msg.id, { name: "ext-flood", version: "1", capabilities: ["run"] }));
    case "harness.run": {
      const n = Number(/^flood (\d+)$/.exec(msg.params?.message ?? "")?.[1] ?? 0);
      return void flood(msg.id, msg.params?.runId ?? "run", n);
    }
    case "harness.shutdown":
      out.write(reply(msg.id, { ok: true }), () => process.exit(0));
      return;
    default:
      if (msg.id !== undefined) out.write(reply(msg.id, { ok: true }));
  }
});
process.stdin.on("data", (chunk: Buffer) => splitter.push(chunk));
process.stdin.on("end", () => process.exit(0));
