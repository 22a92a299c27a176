// The secret scan of a checkpoint's new bytes. Native files are mostly JSON, where a value is stored escaped: a key
// holding "/" may be written "\/", any character as "\u00XX" (Python's ensure_ascii, Go's HTML-safe "\u003c"), and
// JSON kept as a string inside JSON (a tool result in a transcript) is escaped twice. Matching the raw bytes alone
// let those through, so the bytes are also searched as JSON strings decode them, up to three times, in one streaming
// pass: what is held between chunks is bounded by the longest secret, never the file. Each level is also searched
// for the secrets' base64 and percent-encoded forms (a basic-auth header, a URL with a token in its query).
import { encodedForms, type SecretEncoding } from "../secret-forms.js";

export interface SecretHit {
  /** Which secret (0-based): never the secret itself, which must not reach a message or a log. */
  index: number;
  /** The byte of the file where the secret (or the escape that begins it) starts. */
  offset: number;
  /** Found only once JSON escapes were decoded. */
  escaped?: boolean;
  /** Found written in base64 (standard or URL-safe) or percent-encoded. */
  encoded?: Exclude<SecretEncoding, "slash-escaped">;
}

/** JSON held as a string in JSON held as a string in a file: a tool's JSON result in a transcript's JSON event. */
const LEVELS = 3;

/**
 * How many bytes before the old end of an append-only file the scan starts: a secret there may straddle it, and
 * escaped LEVELS times one byte of it takes up to 6 ** LEVELS (a "\u00XX" whose characters are each "\u00XX").
 */
export function scanReach(secrets: Buffer[]): number {
  return Math.max(0, ...patternsOf(secrets).map((p) => p.bytes.length * 6 ** LEVELS));
}

/** A byte string that shows a secret: the secret itself or one of its encodings. */
interface Pattern {
  bytes: Buffer;
  index: number;
  encoded?: SecretHit["encoded"];
}

/**
 * The secrets and the encoded forms of them a file may hold (../secret-forms.ts, as the session log's redactor knows
 * them): base64 at each of the three byte alignments it can start at, standard and URL-safe, and percent-encoded.
 * Not the `\/`-escaped form: the scan decodes JSON escapes itself, and says a key found so was JSON-escaped.
 */
function patternsOf(secrets: Buffer[]): Pattern[] {
  const out: Pattern[] = [];
  for (const [index, bytes] of secrets.entries()) {
    out.push({ index, bytes });
    for (const { text, encoding } of encodedForms(bytes.toString("utf8"))) {
      if (encoding !== "slash-escaped") out.push({ index, bytes: Buffer.from(text), encoded: encoding });
    }
  }
  return out;
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

  constructor(private readonly patterns: Pattern[]) {
    this.keep = Math.max(0, ...patterns.map((p) => p.bytes.length - 1));
  }

  /** `searched`: the run is one a matcher of a level before searched, so only the carry joined to it is new. */
  push(run: Run, searched = false): SecretHit | undefined {
    // The run is searched where it lies and only the carry with its first bytes joined: a copy of the whole run
    // per level and chunk cost as much as the search.
    const edge = joined(this.carry, { bytes: run.bytes.subarray(0, this.keep), origin: run.origin });
    let hit: SecretHit | undefined;
    for (const { bytes, index, encoded } of this.patterns) {
      for (const data of searched ? [edge] : [edge, run]) {
        const at = data.bytes.indexOf(bytes);
        if (at >= 0 && (!hit || data.origin(at) < hit.offset)) {
          hit = encoded ? { index, offset: data.origin(at), encoded } : { index, offset: data.origin(at) };
        }
      }
    }
    const last = run.bytes.length >= this.keep ? run : edge;
    this.carry = keepTail(last, Math.max(0, last.bytes.length - this.keep));
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

/** How many bytes of UTF-8 a code point takes. */
function utf8Length(point: number): number {
  return point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
}

/**
 * Every so many escapes, or bytes that hold backslashes but few escapes (binary data), an unescaper notes where it
 * stands, so that an origin is found by decoding a few again.
 */
const MARK_EVERY = 16;
const MARK_SPAN = 4096;

/**
 * Where each byte of an unescaper's output came from. Noting it at every escape was a third of the scan's time, yet
 * it is asked only for a hit and for the few bytes carried to the next chunk: so it is noted at every MARK_EVERY-th
 * escape, and found by decoding again from the mark before it.
 */
class Origins {
  private marks = new Int32Array(2 * 64);
  private count = 1;

  constructor(private readonly data: Buffer) {}

  /** Output byte `out` is the next one written, from input byte `input`, which begins no escape's middle. */
  /** Returns 0: the count of escapes since the last mark. */
  mark(out: number, input: number): number {
    let marks = this.marks;
    const at = 2 * this.count++;
    if (at === marks.length) {
      marks = new Int32Array(marks.length * 2);
      marks.set(this.marks);
      this.marks = marks;
    }
    marks[at] = out;
    marks[at + 1] = input;
    return 0;
  }

  /** The input byte output byte `d` came from: the one it was copied from, or the start of its escape. */
  of(d: number): number {
    const marks = this.marks;
    let [lo, hi] = [0, this.count - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (marks[2 * mid]! <= d) lo = mid;
      else hi = mid - 1;
    }
    let [n, i] = [marks[2 * lo]!, marks[2 * lo + 1]!];
    for (;;) {
      let next = this.data.indexOf(BACKSLASH, i);
      if (next < 0) next = this.data.length;
      if (d < n + next - i) return i + d - n;
      [n, i] = [n + next - i, next];
      const decoded = decodeEscape(this.data, i);
      const [written, read] = decoded < 0 ? [1, 1] : [utf8Length(Math.floor(decoded / 16)), decoded % 16];
      if (d < n + written) return i;
      n += written;
      i += read;
    }
  }
}

/** A run of bytes with no backslash shorter than this is copied byte by byte: a native call per run costs more. */
const LONG_RUN = 32;

/** The bytes as a JSON string's escapes decode them; anything that is no escape passes as it is. */
class Unescaper {
  private pending = EMPTY;

  push(run: Run): Run {
    if (this.pending.bytes.length === 0 && run.bytes.indexOf(BACKSLASH) < 0) return run;
    const input = joined(this.pending, run);
    const data = input.bytes;
    const length = data.length;
    const out = Buffer.allocUnsafe(length);
    const origins = new Origins(data);
    let escapes = 0;
    let marked = 0;
    let n = 0;
    let i = 0;
    while (i < length) {
      // Escapes are dense in JSON held in JSON and sparse in prose: copy a few bytes by hand as they are looked
      // at (looking, then copying, read each twice), then the rest of a long run natively.
      const near = Math.min(length, i + LONG_RUN);
      while (i < near) {
        const b = data[i]!;
        if (b === BACKSLASH) break;
        out[n++] = b;
        i++;
      }
      if (i === near && i < length && data[i] !== BACKSLASH) {
        let next = data.indexOf(BACKSLASH, i);
        if (next < 0) next = length;
        n += data.copy(out, n, i, next);
        i = next;
      }
      if (i === length) break;
      const simple = i + 1 < length ? SIMPLE[data[i + 1]!]! : -1;
      if (simple >= 0) {
        // The common escape inline: a call per escape was most of the time on JSON held in JSON.
        out[n++] = simple;
        i += 2;
        if (++escapes >= MARK_EVERY || i - marked >= MARK_SPAN) [escapes, marked] = [origins.mark(n, i), i];
        continue;
      }
      const decoded = decodeEscape(data, i);
      if (decoded === SHORT) break;
      if (decoded === NOT_AN_ESCAPE) {
        // Copied as it is, like the bytes around it: the piece it is in maps it already.
        out[n++] = BACKSLASH;
        i++;
        if (i - marked >= MARK_SPAN) [escapes, marked] = [origins.mark(n, i), i];
        continue;
      }
      const point = Math.floor(decoded / 16);
      if (point < 0x80) out[n++] = point;
      else n += out.write(String.fromCodePoint(point), n);
      i += decoded % 16;
      if (++escapes >= MARK_EVERY || i - marked >= MARK_SPAN) [escapes, marked] = [origins.mark(n, i), i];
    }
    this.pending = keepTail(input, i);
    return { bytes: out.subarray(0, n), origin: (d) => input.origin(origins.of(d)) };
  }

  /** What was held back at the end: an escape cut off by the end of the bytes, passed as it is. */
  end(): Run {
    const rest = this.pending;
    this.pending = EMPTY;
    return rest;
  }
}

/** Searches a stream of chunks for the secrets raw and JSON-decoded up to LEVELS times; `hit` is the first found. */
export class SecretScanner {
  hit: SecretHit | undefined;
  private readonly matchers: Matcher[];
  private readonly unescapers = Array.from({ length: LEVELS }, () => new Unescaper());

  constructor(private readonly secrets: Buffer[]) {
    const patterns = patternsOf(secrets);
    this.matchers = Array.from({ length: LEVELS + 1 }, () => new Matcher(patterns));
  }

  push(chunk: Buffer, pos: number): void {
    if (this.hit || this.secrets.length === 0) return;
    const runs: Run[] = [{ bytes: chunk, origin: (i) => pos + i }];
    for (const unescaper of this.unescapers) runs.push(unescaper.push(runs.at(-1)!));
    this.match(runs);
  }

  end(): void {
    // What each level held back (an escape cut off by the end) goes on through the levels after it.
    for (const [level, unescaper] of this.unescapers.entries()) {
      if (this.hit || this.secrets.length === 0) return;
      const runs: Run[] = [...Array.from({ length: level + 1 }, () => EMPTY), unescaper.end()];
      for (const next of this.unescapers.slice(level + 1)) runs.push(next.push(runs.at(-1)!));
      this.match(runs);
    }
  }

  private match(runs: Run[]): void {
    for (const [level, run] of runs.entries()) {
      // A chunk with no escape passes a level as it is: its own bytes hold what they held a level before, and
      // searching them again at every level was three quarters of the scan of prose.
      const hit = this.matchers[level]!.push(run, level > 0 && run === runs[level - 1]);
      if (hit && (!this.hit || hit.offset < this.hit.offset)) {
        this.hit = level === 0 ? hit : { ...hit, escaped: true };
      }
    }
  }
}
