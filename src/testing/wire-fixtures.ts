// The shared JSON-RPC line fixtures (fixtures/wire/jsonrpc-lines.json) as the chunks a reader is fed. Brain's
// decoder, the TypeScript nui SDK and the Python SDK read the same file, so they take the same lines.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

type Chunk = string | { hex: string } | { pad: { id: string; bytes: number; char: string } };

interface RawCase {
  name: string;
  in: Chunk[];
  answered: (string | number)[];
  ended: boolean;
}

export interface WireCase {
  name: string;
  chunks: Buffer[];
  /** The ids of the harness.info requests a reader takes, in order. */
  answered: (string | number)[];
  /** The reader ends the stream (a line over the cap) and reads nothing after it. */
  ended: boolean;
}

const FILE = fileURLToPath(new URL("./fixtures/wire/jsonrpc-lines.json", import.meta.url));

/** A harness.info line of exactly `bytes` UTF-8 bytes before its newline (sdk/python/tests builds it the same way). */
function paddedLine({ id, bytes, char }: { id: string; bytes: number; char: string }): Buffer {
  const line = (pad: string) =>
    JSON.stringify({ jsonrpc: "2.0", id, method: "harness.info", params: { pad } });
  const need = bytes - Buffer.byteLength(line(""));
  const each = Buffer.byteLength(char);
  const pad = char.repeat(Math.floor(need / each)) + "x".repeat(need % each);
  const out = Buffer.from(`${line(pad)}\n`);
  if (out.length !== bytes + 1) throw new Error(`padded line of ${out.length - 1} bytes, not ${bytes}`);
  return out;
}

function toBuffer(chunk: Chunk): Buffer {
  if (typeof chunk === "string") return Buffer.from(chunk);
  if ("hex" in chunk) return Buffer.from(chunk.hex, "hex");
  return paddedLine(chunk.pad);
}

export function wireCases(): WireCase[] {
  const { cases } = JSON.parse(readFileSync(FILE, "utf8")) as { cases: RawCase[] };
  return cases.map((c) => ({
    name: c.name,
    chunks: c.in.map(toBuffer),
    answered: c.answered,
    ended: c.ended,
  }));
}
