// A turn's text gathered as UTF-8 bytes off the JS heap, piece by piece, each piece's delta data made of those
// bytes when JSON writes them as they are (see stableBytes), and the whole text as one assistant.message at the end.
import { isAscii, isUtf8 } from "node:buffer";
import { heldMessageOf, stableBytes } from "./fast-frames.js";
import { copyPlain } from "./fast-lines.js";

type Utf8Write = (this: Buffer, s: string, offset: number, length: number) => number;
/** Buffer's own UTF-8 writer, without buf.write's argument checks; buf.write where a runtime lacks it. */
const utf8Write: Utf8Write =
  (Buffer.prototype as unknown as { utf8Write?: Utf8Write }).utf8Write ??
  function (this: Buffer, s, offset, length) {
    return this.write(s, offset, length, "utf8");
  };

/**
 * A block of a turn's text as a string, made in pieces of at most PIECE bytes: each is an ordinary string on the
 * JS heap, whose pages the heap keeps and reuses turn after turn. A whole block (up to 1 MiB) was either a large
 * heap object or, read as Latin-1, an external string: fresh pages from the OS for every turn's text, each page
 * faulted in on first touch (measured 15 us a page on a 2-vCPU VM: 25-30 ms for a 100k-delta turn's 7 MB, the
 * larger part of making its message). ASCII (most model output) is read as Latin-1, the same text, and cheaper to
 * decode than UTF-8; other blocks are cut at character boundaries (never before a continuation byte).
 */
function decode(block: Buffer): string {
  const ascii = isAscii(block);
  let text = "";
  for (let from = 0; from < block.length; ) {
    let to = Math.min(block.length, from + PIECE);
    if (!ascii) while (to < block.length && (block[to]! & 0xc0) === 0x80) to--;
    text += ascii ? latin1Slice.call(block, from, to) : utf8Slice.call(block, from, to);
    from = to;
  }
  return text;
}

/**
 * Bytes per piece of a decoded block: its string stays below V8's large-object size (128 KiB) even as UTF-16,
 * which UTF-8 of up to 32 Ki bytes never passes (a unit per byte at most).
 */
const PIECE = 32 * 1024;

type Slice = (this: Buffer, start: number, end: number) => string;
/** Buffer's own decoders, without toString's argument checks; toString where a runtime lacks them. */
const slice = (name: "latin1Slice" | "utf8Slice", encoding: BufferEncoding): Slice =>
  (Buffer.prototype as unknown as Record<string, Slice | undefined>)[name] ??
  function (this: Buffer, start, end) {
    return this.toString(encoding, start, end);
  };
const [latin1Slice, utf8Slice] = [slice("latin1Slice", "latin1"), slice("utf8Slice", "utf8")];

/** What JSON writes other than as the character itself. */
const ESCAPED = /["\\\u0000-\u001f]/;
/** A surrogate not in a pair: UTF-8 cannot carry it (it would become U+FFFD). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A turn's whole text, gathered piece by piece as UTF-8 off the JS heap instead of as a string holding every
 * piece until the turn ends (which the GC copied and promoted, piece by piece). Each piece comes back as its
 * delta's data: the accumulator's own bytes (verbatimBytes) when JSON writes the piece as it is, so the log
 * copies them and the piece's string dies young; a plain `{text}` otherwise. A piece with a lone surrogate
 * turns it into a plain string from then on, so the whole text stays exactly the pieces joined.
 */
export class TextBytes {
  /** Full blocks, each the UTF-8 of whole pieces. */
  private readonly full: Buffer[] = [];
  private buf = Buffer.allocUnsafe(0);
  /** A DataView of `buf`, for copyPlain. */
  private view = new DataView(this.buf.buffer, this.buf.byteOffset, 0);
  private at = 0;
  /** Whether every piece so far is one JSON writes as it is (so the whole text is too). */
  private plain = true;
  /** Set once a piece could not be held as UTF-8: the text so far as a string. */
  private string: string | undefined;

  /** Adds `piece` to the text; returns the data of its delta. */
  add(piece: string): { readonly text: string } {
    if (this.string !== undefined || LONE_SURROGATE.test(piece)) {
      this.string = this.text() + piece;
      return { text: piece };
    }
    // A UTF-16 unit never takes more than 3 bytes in UTF-8.
    this.reserve(piece.length * 3);
    const start = this.at;
    this.at += utf8Write.call(this.buf, piece, start, this.buf.length - start);
    if (!ESCAPED.test(piece)) return stableBytes(this.buf, start, this.at);
    this.plain = false;
    return { text: piece };
  }

  /**
   * Adds bytes [start, end) of `buf`, which must be plain (no quote, backslash or control character) and valid
   * UTF-8 (see plainToken); returns the data of their delta.
   */
  addBytes(buf: Buffer, start: number, end: number): { readonly text: string } {
    if (this.string !== undefined) {
      const piece = buf.toString("utf8", start, end);
      this.string += piece;
      return { text: piece };
    }
    const n = end - start;
    this.reserve(n);
    const at = this.at;
    this.at += buf.copy(this.buf, at, start, end);
    return stableBytes(this.buf, at, this.at);
  }

  /**
   * Adds bytes [start, end) of `buf` (`view` is a DataView of it) when they are plain (see copyPlain): a JSON string
   * token's contents as read from a stream, checked and copied in one pass. Returns the data of their delta, or
   * undefined, having added nothing, when they are not plain.
   */
  addPlain(buf: Buffer, start: number, end: number, view: DataView): { readonly text: string } | undefined {
    if (this.string !== undefined) {
      const piece = buf.toString("utf8", start, end);
      if (ESCAPED.test(piece) || !isUtf8(buf.subarray(start, end))) return undefined;
      this.string += piece;
      return { text: piece };
    }
    const n = end - start;
    this.reserve(n);
    const at = this.at;
    if (!copyPlain(buf, view, start, end, this.buf, this.view, at)) return undefined;
    this.at += n;
    return stableBytes(this.buf, at, this.at);
  }

  get empty(): boolean {
    return this.string === undefined ? this.at === 0 && this.full.length === 0 : this.string.length === 0;
  }

  /**
   * Room for `n` more bytes: a new block when the current one is short (never copied: deltas not yet in the log
   * may be made of its bytes, and a long turn's text would be copied again at each doubling).
   */
  private reserve(n: number): void {
    if (this.buf.length - this.at >= n) return;
    if (this.at > 0) this.full.push(this.buf.subarray(0, this.at));
    this.buf = Buffer.allocUnsafe(Math.max(Math.min(this.buf.length * 2, 1 << 20), n, 64 * 1024));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
    this.at = 0;
  }

  /**
   * The data of the assistant.message that closes the turn: the whole text and `stopReason`. When every piece
   * was plain it keeps the text's bytes too (heldMessage), so the log copies them instead of serialising a turn's
   * worth of text again.
   */
  message(stopReason: string): { text: string; stop_reason: string } {
    const text = this.text();
    if (this.string !== undefined || !this.plain) return { text, stop_reason: stopReason };
    const blocks = this.at > 0 ? [...this.full, this.buf.subarray(0, this.at)] : [...this.full];
    return heldMessageOf(text, stopReason, blocks);
  }

  /** The whole text so far. */
  text(): string {
    if (this.string !== undefined) return this.string;
    // Joined with +, not join(): V8 makes a rope of the blocks then, and copies a turn's worth of text into one
    // flat string only if something reads it character by character (join copied it at once, into fresh pages).
    let text = "";
    for (const block of this.full) text += decode(block);
    return text + decode(this.buf.subarray(0, this.at));
  }
}
