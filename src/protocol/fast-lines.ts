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
    /** `view` is a DataView of `chunk`, for plainToken and ExactBytes to read it four bytes at a time. */
    private readonly fast: (chunk: Buffer, pos: number, view: DataView) => number,
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
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.length);
    while (pos < chunk.length) {
      const next = this.fast(chunk, pos, view);
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
export function plainToken(chunk: Buffer, start: number, view?: DataView): number {
  let high = false;
  let i = start;
  // Four bytes at a time while none of them is a quote, a backslash, a control character or above 0x7f (each
  // test below is the exact "has such a byte" of its word): the loop after reads from the first word that has one.
  if (view !== undefined) {
    for (const last = chunk.length - 4; i <= last; i += 4) {
      const w = view.getInt32(i, true);
      const q = w ^ 0x22222222;
      const b = w ^ 0x5c5c5c5c;
      if (
        (w & 0x80808080) |
        ((w - 0x20202020) & ~w & 0x80808080) |
        ((q - 0x01010101) & ~q & 0x80808080) |
        ((b - 0x01010101) & ~b & 0x80808080)
      )
        break;
    }
  }
  for (; i < chunk.length; i++) {
    const b = chunk[i]!;
    if (b === 0x22) return high && !isUtf8(chunk.subarray(start, i)) ? -1 : i;
    if (b < 0x20 || b === 0x5c) return -1;
    if (b >= 0x80) high = true;
  }
  return -1;
}

/**
 * Copies bytes [start, end) of `src` to `dst` at `at` (`srcView` and `dstView` are DataViews of the two) and says
 * whether they are plain, as plainToken means it: no quote, backslash or control character, and valid UTF-8. Read
 * and written four bytes at a time, in one pass: the caller knows where the token ends, so no search for its quote
 * comes first. `dst` must have room for them; what was written there means nothing when they are not plain.
 */
export function copyPlain(
  src: Buffer,
  srcView: DataView,
  start: number,
  end: number,
  dst: Buffer,
  dstView: DataView,
  at: number,
): boolean {
  let high = 0;
  let i = start;
  let j = at;
  for (const last = end - 4; i <= last; i += 4, j += 4) {
    const w = srcView.getInt32(i, true);
    const q = w ^ 0x22222222;
    const b = w ^ 0x5c5c5c5c;
    // Exact per byte, high bytes or not (no borrow or carry crosses a byte): one below 0x20; a zero byte of q (a
    // quote) or of b (a backslash).
    if (
      (~(((w & 0x7f7f7f7f) + 0x60606060) | w) & 0x80808080) |
      ~(((q & 0x7f7f7f7f) + 0x7f7f7f7f) | q | 0x7f7f7f7f) |
      ~(((b & 0x7f7f7f7f) + 0x7f7f7f7f) | b | 0x7f7f7f7f)
    )
      return false;
    dstView.setInt32(j, w, true);
    high |= w;
  }
  for (; i < end; i++, j++) {
    const c = src[i]!;
    if (c < 0x20 || c === 0x22 || c === 0x5c) return false;
    dst[j] = c;
    high |= c;
  }
  return (high & 0x80808080) === 0 || isUtf8(dst.subarray(at, j));
}

/** Bytes to find at a position of a chunk, compared eight at a time. */
export class ExactBytes {
  readonly length: number;
  private readonly view: DataView;
  /**
   * The bytes as doubles, eight at a time, when comparing those is comparing bits: two doubles are equal exactly
   * when their bits are, except 0 and -0 (equal) and NaN (unequal to itself), so none may be either. Text is
   * neither (a 0 is eight zero bytes, -0 seven and 0x80, a NaN has 0x7f or 0xff and a byte from 0xf0 at its top).
   * Undefined otherwise: the bytes are compared four at a time.
   */
  private readonly doubles: Float64Array | undefined;

  constructor(readonly bytes: Uint8Array) {
    this.length = bytes.length;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const doubles = new Float64Array(this.length >> 3);
    for (let k = 0; k < doubles.length; k++) doubles[k] = this.view.getFloat64(8 * k, true);
    this.doubles = doubles.every((d) => d !== 0 && !Number.isNaN(d)) ? doubles : undefined;
  }

  /** Whether `chunk` (`view` is a DataView of it) holds these bytes at `pos`. */
  at(chunk: Buffer, view: DataView, pos: number): boolean {
    const n = this.length;
    if (chunk.length - pos < n) return false;
    let i = 0;
    const doubles = this.doubles;
    if (doubles !== undefined) {
      for (let k = 0; k < doubles.length; k++, i += 8)
        if (view.getFloat64(pos + i, true) !== doubles[k]) return false;
    }
    for (; i + 4 <= n; i += 4) if (view.getInt32(pos + i, true) !== this.view.getInt32(i, true)) return false;
    for (; i < n; i++) if (chunk[pos + i] !== this.bytes[i]) return false;
    return true;
  }
}
