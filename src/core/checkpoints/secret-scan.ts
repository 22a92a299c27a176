// The secret scan of a checkpoint's new bytes. Native files are mostly JSON, where a value is stored escaped: a key
// holding "/" may be written "\/", any character as "\u00XX" (Python's ensure_ascii, Go's HTML-safe "\u003c"), and
// JSON kept as a string inside JSON (a tool result in a transcript) is escaped twice. Matching the raw bytes alone
// let those through, so the bytes are also searched as JSON strings decode them, once and twice, in one streaming
// pass: what is held between chunks is bounded by the longest secret, never the file.

export interface SecretHit {
  /** Which secret (0-based): never the secret itself, which must not reach a message or a log. */
  index: number;
  /** The byte of the file where the secret (or the escape that begins it) starts. */
  offset: number;
  /** Found only once JSON escapes were decoded. */
  escaped?: boolean;
}

/**
 * How many bytes before the old end of an append-only file the scan starts: a secret there may straddle it, and
 * escaped twice one byte of it takes up to 36 (a "\u00XX" whose six characters are each "\u00XX").
 */
export function scanReach(secrets: Buffer[]): number {
  return Math.max(0, ...secrets.map((s) => s.length * 36));
}

/** Bytes, each with the byte of the file it came from (asked only for a hit and for the few bytes carried over). */
interface Run {
  bytes: Buffer;
  origin(i: number): number;
}

const EMPTY: Run = { bytes: Buffer.alloc(0), origin: (i) => i };

/** Two runs as one: `first` then `second`. */
function joined(first: Run, second: Run): Run {
  const n = first.bytes.length;
  if (n === 0) return second;
  return {
    bytes: Buffer.concat([first.bytes, second.bytes]),
    origin: (i) => (i < n ? first.origin(i) : second.origin(i - n)),
  };
}

/** The run's bytes from `start` on, kept for the next push: copied, as the chunk buffer is reused. */
function keepTail(run: Run, start: number): Run {
  const from = new Float64Array(run.bytes.length - start);
  for (let i = 0; i < from.length; i++) from[i] = run.origin(start + i);
  return { bytes: Buffer.from(run.bytes.subarray(start)), origin: (i) => from[i]! };
}

/** The earliest secret in a stream of runs, across their ends. */
class Matcher {
  private carry = EMPTY;
  private readonly keep: number;

  constructor(private readonly secrets: Buffer[]) {
    this.keep = Math.max(0, ...secrets.map((s) => s.length - 1));
  }

  push(run: Run): SecretHit | undefined {
    const data = joined(this.carry, run);
    let hit: SecretHit | undefined;
    for (const [index, secret] of this.secrets.entries()) {
      const at = data.bytes.indexOf(secret);
      if (at >= 0 && (!hit || data.origin(at) < hit.offset)) hit = { index, offset: data.origin(at) };
    }
    this.carry = keepTail(data, Math.max(0, data.bytes.length - this.keep));
    return hit;
  }
}

const BACKSLASH = 0x5c;
const SHORT = -1;
const NOT_AN_ESCAPE = -2;
/** The one-character escapes of JSON (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`), by the byte after the backslash. */
const SIMPLE = new Int16Array(256).fill(-1);
for (const [after, byte] of [
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x2f, 0x2f],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
]) {
  SIMPLE[after!] = byte!;
}

function hexDigit(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  const lower = b | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/** Four hex digits at `at`, SHORT when the data ends first, NOT_AN_ESCAPE when they are not hex. */
function hex4(data: Buffer, at: number): number {
  if (at + 4 > data.length) return SHORT;
  let value = 0;
  for (let k = at; k < at + 4; k++) {
    const digit = hexDigit(data[k]!);
    if (digit < 0) return NOT_AN_ESCAPE;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * The escape at `i` (a backslash): its code point * 16 + its length in bytes, SHORT if the data ends inside it,
 * NOT_AN_ESCAPE if it is none. A lone surrogate is U+FFFD, which no secret in UTF-8 holds where it stood.
 */
function decodeEscape(data: Buffer, i: number): number {
  if (i + 1 >= data.length) return SHORT;
  const simple = SIMPLE[data[i + 1]!]!;
  if (simple >= 0) return simple * 16 + 2;
  if (data[i + 1] !== 0x75) return NOT_AN_ESCAPE;
  const unit = hex4(data, i + 2);
  if (unit < 0) return unit;
  if (unit < 0xd800 || unit >= 0xe000) return unit * 16 + 6;
  if (unit >= 0xdc00) return 0xfffd * 16 + 6;
  if (i + 8 > data.length) return SHORT;
  if (data[i + 6] !== BACKSLASH || data[i + 7] !== 0x75) return 0xfffd * 16 + 6;
  const low = hex4(data, i + 8);
  if (low === SHORT) return SHORT;
  if (low < 0xdc00 || low >= 0xe000) return 0xfffd * 16 + 6;
  return (0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)) * 16 + 12;
}

/** The bytes as a JSON string's escapes decode them; anything that is no escape passes as it is. */
class Unescaper {
  private pending = EMPTY;

  push(run: Run): Run {
    if (this.pending.bytes.length === 0 && run.bytes.indexOf(BACKSLASH) < 0) return run;
    const input = joined(this.pending, run);
    const data = input.bytes;
    const out = Buffer.allocUnsafe(data.length);
    // Pieces of the output, three numbers each: where it starts, where it came from, 1 if copied (else one escape's).
    let pieces = new Float64Array(3 * 64);
    pieces[2] = 1;
    let count = 1;
    const piece = (o: number, from: number, copy: number) => {
      if (3 * count === pieces.length) {
        const grown = new Float64Array(pieces.length * 2);
        grown.set(pieces);
        pieces = grown;
      }
      pieces[3 * count] = o;
      pieces[3 * count + 1] = from;
      pieces[3 * count++ + 2] = copy;
    };
    let n = 0;
    let i = 0;
    // One byte at a time: escapes are dense in JSON held in JSON, where a call per piece cost more than the loop.
    while (i < data.length) {
      const b = data[i]!;
      if (b !== BACKSLASH) {
        out[n++] = b;
        i++;
        continue;
      }
      const decoded = decodeEscape(data, i);
      if (decoded === SHORT) break;
      if (decoded === NOT_AN_ESCAPE) {
        out[n++] = b;
        i++;
        continue;
      }
      piece(n, i, 0);
      const point = Math.floor(decoded / 16);
      if (point < 0x80) out[n++] = point;
      else n += out.write(String.fromCodePoint(point), n);
      i += decoded % 16;
      piece(n, i, 1);
    }
    this.pending = keepTail(input, i);
    const origin = (d: number) => {
      let [lo, hi] = [0, count - 1];
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (pieces[3 * mid]! <= d) lo = mid;
        else hi = mid - 1;
      }
      const [start, from, copy] = pieces.subarray(3 * lo, 3 * lo + 3);
      return input.origin(copy ? from! + d - start! : from!);
    };
    return { bytes: out.subarray(0, n), origin };
  }

  /** What was held back at the end: an escape cut off by the end of the bytes, passed as it is. */
  end(): Run {
    const rest = this.pending;
    this.pending = EMPTY;
    return rest;
  }
}

/** Searches a stream of chunks for the secrets raw, JSON-decoded once, and twice; `hit` is the first found. */
export class SecretScanner {
  hit: SecretHit | undefined;
  private readonly matchers: Matcher[];
  private readonly once = new Unescaper();
  private readonly twice = new Unescaper();

  constructor(private readonly secrets: Buffer[]) {
    this.matchers = [0, 1, 2].map(() => new Matcher(secrets));
  }

  push(chunk: Buffer, pos: number): void {
    if (this.hit || this.secrets.length === 0) return;
    const raw: Run = { bytes: chunk, origin: (i) => pos + i };
    const once = this.once.push(raw);
    this.match([raw, once, this.twice.push(once)]);
  }

  end(): void {
    if (this.hit || this.secrets.length === 0) return;
    const once = this.once.end();
    const twice = this.twice.push(once);
    this.match([EMPTY, once, twice]);
    if (!this.hit) this.match([EMPTY, EMPTY, this.twice.end()]);
  }

  private match(runs: Run[]): void {
    for (const [level, run] of runs.entries()) {
      const hit = this.matchers[level]!.push(run);
      if (hit && (!this.hit || hit.offset < this.hit.offset)) {
        this.hit = level === 0 ? hit : { ...hit, escaped: true };
      }
    }
  }
}
