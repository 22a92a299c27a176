// Lines read straight from a stream's bytes where the caller can: the relay's hot paths (runner deltas,
// extension host text events) take their common line without making a string of it, and leave every other line
// to LineSplitter and the full decode.
import { isUtf8 } from "node:buffer";
import { LineSplitter } from "./ndjson.js";

const NEWLINE = 0x0a;

/**
 * A LineSplitter that first offers each line wholly inside a chunk to `fast`, which takes it straight from the
 * chunk's bytes when it can (returning where the next line starts) or declines (-1, having done nothing); what
 * it declines, and lines split across chunks, go to `onLine` as strings. Lines keep their order.
 */
export class FastLineSplitter {
  private readonly splitter: LineSplitter;

  constructor(
    onLine: (line: string) => void,
    private readonly fast: (chunk: Buffer, pos: number) => number,
  ) {
    this.splitter = new LineSplitter(onLine);
  }

  /** Throws FramingError when a line passes the cap (`fast` must decline lines over MAX_FRAME). */
  push(chunk: Buffer): void {
    let pos = 0;
    if (this.splitter.buffered > 0) {
      // The rest of a line begun in an earlier chunk.
      const nl = chunk.indexOf(NEWLINE);
      if (nl === -1) return this.splitter.push(chunk);
      this.splitter.push(chunk.subarray(0, nl + 1));
      pos = nl + 1;
    }
    while (pos < chunk.length) {
      const next = this.fast(chunk, pos);
      if (next !== -1) {
        pos = next;
        continue;
      }
      const nl = chunk.indexOf(NEWLINE, pos);
      if (nl === -1) return this.splitter.push(pos === 0 ? chunk : chunk.subarray(pos));
      this.splitter.push(chunk.subarray(pos, nl + 1));
      pos = nl + 1;
    }
  }

  get buffered(): number {
    return this.splitter.buffered;
  }

  end(): void {
    this.splitter.end();
  }
}

/**
 * Where the JSON string token whose contents start at `start` ends (its closing quote), when its contents are
 * plain: no backslash or control character (so JSON reads the bytes as they are) and valid UTF-8 (so decoding
 * them replaces nothing), all within `chunk`. -1 otherwise.
 */
export function plainToken(chunk: Buffer, start: number): number {
  let high = false;
  for (let i = start; i < chunk.length; i++) {
    const b = chunk[i]!;
    if (b === 0x22) return high && !isUtf8(chunk.subarray(start, i)) ? -1 : i;
    if (b < 0x20 || b === 0x5c) return -1;
    if (b >= 0x80) high = true;
  }
  return -1;
}

/** Whether `chunk` holds `bytes` at `pos`. */
export function bytesAt(chunk: Buffer, pos: number, bytes: Uint8Array): boolean {
  const n = bytes.length;
  if (chunk.length - pos < n) return false;
  for (let i = 0; i < n; i++) if (chunk[pos + i] !== bytes[i]) return false;
  return true;
}
