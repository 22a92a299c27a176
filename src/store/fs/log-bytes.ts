// The growing buffer a commit's lines (and a batch's held texts) are written into.

type Utf8Write = (this: Buffer, s: string, offset: number, length: number) => number;
/**
 * Buffer's own UTF-8 writer, without the argument checks of buf.write (which cost more than the copy for a
 * delta's text); buf.write where a runtime lacks it.
 */
const utf8Write: Utf8Write =
  (Buffer.prototype as unknown as { utf8Write?: Utf8Write }).utf8Write ??
  function (this: Buffer, s, offset, length) {
    return this.write(s, offset, length, "utf8");
  };

type Utf8Slice = (this: Buffer, start: number, end: number) => string;
/** Buffer's own UTF-8 decoder, without toString's argument checks; toString where a runtime lacks it. */
export const utf8Slice: Utf8Slice =
  (Buffer.prototype as unknown as { utf8Slice?: Utf8Slice }).utf8Slice ??
  function (this: Buffer, start, end) {
    return this.toString("utf8", start, end);
  };

/** A growing buffer written as UTF-8; every write knows its byte count, so no text is measured twice. */
export class Bytes {
  private buf: Buffer;
  at = 0;

  /** Over `buf` (written from its start), or a new buffer of `size` bytes. */
  constructor(size: number | Buffer) {
    this.buf = typeof size === "number" ? Buffer.allocUnsafe(size) : size;
  }

  /** The whole buffer written into, for another Bytes to reuse. */
  whole(): Buffer {
    return this.buf;
  }

  write(s: string): void {
    // A UTF-16 unit never takes more than 3 bytes in UTF-8.
    if (this.buf.length - this.at < s.length * 3) this.grow(s.length * 3);
    this.at += utf8Write.call(this.buf, s, this.at, this.buf.length - this.at);
  }

  /** Bytes that copy themselves (a VerbatimBytes). */
  from(text: { copyTo(target: Buffer, at: number): number; readonly byteLength: number }): void {
    if (this.buf.length - this.at < text.byteLength) this.grow(text.byteLength);
    this.at += text.copyTo(this.buf, this.at);
  }

  /** Bytes [from, to) of `b`. */
  range(b: Buffer, from: number, to: number): void {
    if (this.buf.length - this.at < to - from) this.grow(to - from);
    this.at += b.copy(this.buf, this.at, from, to);
  }

  byte(b: number): void {
    if (this.at === this.buf.length) this.grow(1);
    this.buf[this.at++] = b;
  }

  /** Bytes [from, at): the buffer may still grow (into a new one) after. */
  part(from: number): Buffer {
    return this.buf.subarray(from, this.at);
  }

  private grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + need + 4096));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
}
