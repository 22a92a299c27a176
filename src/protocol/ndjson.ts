// NDJSON framing. Lines split on "\n" only: readline also splits on U+2028/U+2029, which are legal inside JSON
// strings. An over-long line is refused as soon as it passes the cap, before it is buffered whole.
// No zod here: a runner built on the SDK imports this at start, and zod is the heaviest thing it could load.

/** A frame (one line, newline excluded) may be at most 4 MiB: `MaxFrame = 4 << 20` in Brain's Go original. */
export const MAX_FRAME = 4 << 20;

export class FramingError extends Error {
  override name = "FramingError";
}

const NEWLINE = 0x0a;

/** Feeds chunks in, calls `onLine` once per complete line (without its "\n"). */
export class LineSplitter {
  private parts: Buffer[] = [];
  private pending = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLine = MAX_FRAME,
  ) {}

  /** Throws FramingError when a line grows past the cap; the splitter is unusable after that. */
  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const length = this.pending + (nl - start);
      if (length > this.maxLine) throw this.tooLong(length);
      if (this.pending === 0) {
        this.onLine(chunk.toString("utf8", start, nl));
      } else {
        this.parts.push(chunk.subarray(start, nl));
        const line = Buffer.concat(this.parts, length).toString("utf8");
        this.parts = [];
        this.pending = 0;
        this.onLine(line);
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.pending += chunk.length - start;
      if (this.pending > this.maxLine) throw this.tooLong(this.pending);
      this.parts.push(chunk.subarray(start));
    }
  }

  /** Bytes of an unfinished line still held. */
  get buffered(): number {
    return this.pending;
  }

  /** Call at end of stream: a half-written last line is a framing error. */
  end(): void {
    if (this.pending > 0) {
      const n = this.pending;
      this.parts = [];
      this.pending = 0;
      throw new FramingError(`stream ended in the middle of a frame (${n} bytes without a newline)`);
    }
  }

  private tooLong(length: number): FramingError {
    this.parts = [];
    this.pending = 0;
    return new FramingError(
      `frame of more than ${this.maxLine} bytes (at least ${length}): frames are capped at ${sizeOf(this.maxLine)} per line`,
    );
  }
}

/** A cap as people read it: "4 MiB" for the frame cap, bytes for a cap that is no whole MiB. */
export function sizeOf(bytes: number): string {
  return bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MiB` : `${bytes} bytes`;
}

export function encodeLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/**
 * One frame as the bytes to write, or a FramingError when it is over the cap: a peer would refuse the line and
 * drop the whole stream, so the sender must fail this one frame instead.
 */
export function encodeFrame(value: unknown, maxLine = MAX_FRAME): Buffer {
  const bytes = Buffer.from(encodeLine(value), "utf8");
  if (bytes.length - 1 > maxLine) {
    throw new FramingError(
      `frame of ${bytes.length - 1} bytes is over the ${maxLine}-byte limit (frames are capped at ${sizeOf(maxLine)} per line); not sent`,
    );
  }
  return bytes;
}

/** A line shortened for an error message. */
export function preview(line: string, max = 200): string {
  return line.length <= max ? line : `${line.slice(0, max)}… (${line.length} chars)`;
}
