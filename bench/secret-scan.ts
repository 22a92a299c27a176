// Secret scan: the checkpoint's scan of new bytes for provider keys (raw, JSON-unescaped up to three times, base64
// and percent-encoded), on the same bytes as a raw search for the keys. Context rows, no target: the scan does
// more than the raw search by design, and the ratio says how much that costs on escape-dense JSONL (JSON held in
// JSON, with "\u00XX", "\"" and "\\") and on prose with no escape at all.
import { SecretScanner } from "../src/core/checkpoints/secret-scan.js";
import { startProbe } from "./lib/load.js";
import { type BenchRow, interleave, log, type Sample, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const MiB = 1 << 20;
const CHUNK = MiB;
const KEYS = [Buffer.from(`sk-ant-api03-${"Zq9xW2".repeat(8)}`), Buffer.from(`ghp_${"a1B2c3D4".repeat(4)}`)];

function repeated(line: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  const bytes = Buffer.from(line);
  for (let at = 0; at < size; ) at += bytes.copy(out, at);
  return out;
}

function inputs(size: number): Record<string, Buffer> {
  const result = JSON.stringify({
    type: "tool_result",
    content: 'said "hi" C:\\dir <b>é</b> \u001b[0m\tok\n'.repeat(6),
  });
  const event = JSON.stringify({
    type: "assistant",
    text: JSON.stringify({ r: result, html: "<a href='x'>&amp;</a>" }),
  });
  return {
    "escape-dense JSONL": repeated(
      `${event.replace(/[<>&']/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)}\n`,
      size,
    ),
    prose: repeated(
      "The quick brown fox jumps over the lazy dog, and then some more prose follows here. ",
      size,
    ),
  };
}

/** CPU time of `fn` per byte of `data`, in ns: the machine is shared, and wall time counts the others' turns. */
function cpuPerByte(data: Buffer, fn: () => void): Sample {
  const probe = startProbe();
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return { value: ((used.user + used.system) * 1000) / data.length, foreign: probe.stop() };
}

function scan(data: Buffer): void {
  const scanner = new SecretScanner(KEYS);
  for (let pos = 0; pos < data.length; pos += CHUNK) scanner.push(data.subarray(pos, pos + CHUNK), pos);
  scanner.end();
  if (scanner.hit) throw new Error("the secret scan bench's input holds a key");
}

function rawSearch(data: Buffer): void {
  for (let pos = 0; pos < data.length; pos += CHUNK) {
    const chunk = data.subarray(pos, pos + CHUNK);
    for (const key of KEYS)
      if (chunk.indexOf(key) >= 0) throw new Error("the raw search's input holds a key");
  }
}

export async function secretScanBench(opts: BenchOptions): Promise<BenchRow[]> {
  const size = (opts.quick ? 16 : 64) * MiB;
  const rows: BenchRow[] = [];
  for (const [name, data] of Object.entries(inputs(size))) {
    log(`secret-scan: ${size / MiB} MiB of ${name} in ${CHUNK / MiB} MiB chunks`);
    const samples = await interleave(
      `secret-scan ${name}`,
      opts.reps,
      {
        baseline: async () => cpuPerByte(data, () => rawSearch(data)),
        subject: async () => cpuPerByte(data, () => scan(data)),
      },
      1,
    );
    rows.push(
      timeRow(
        {
          id: `secret-scan-${name.split(" ")[0]}`,
          what: `checkpoint secret scan, ${KEYS.length} keys, ${size / MiB} MiB of ${name}`,
          unit: "ns/B (CPU)",
          baselineWhat: "Buffer.indexOf of each raw key on the same chunks",
          notes: ["context row: the ratio is the cost of the escaped and encoded forms"],
        },
        samples,
        { kind: "none" },
      ),
    );
  }
  return rows;
}
