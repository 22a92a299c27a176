// Lines whose start says all a reader needs of them, and whose rest may be huge and of no use: pi repeats the
// whole partial message in each `message_update` line, but only the delta near its start is new. A LineSplitter
// would buffer and decode every such line whole, at a cost that grows with the square of a long answer; here the
// start of each line is offered to a hook first, and a line it takes is dropped unread from there on.
import { LineSplitter } from "./ndjson.js";

const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.from("\n");

/**
 * What a head hook makes of the start of a line (`complete`: `head` is the whole line): "taken" when it has taken
 * all it needs from the head (the rest of the line is then skipped, not buffered), "line" to have the line go to
 * `onLine` whole as usual, "more" to be called again with a longer head once more of the line has come.
 */
export type LineHead = (head: Buffer, complete: boolean) => "taken" | "line" | "more";

/** A LineSplitter that shows the start of each line to `head` first. Lines keep their order. */
export class HeadLineSplitter {
  private readonly lines: LineSplitter;
  /** The current line's bytes so far, while `head` has not decided on it. */
  private parts: Buffer[] = [];
  private length = 0;
  private state: "head" | "line" | "skip" = "head";

  constructor(
    onLine: (line: string) => void,
    private readonly maxLine: number,
    private readonly head: LineHead,
  ) {
    this.lines = new LineSplitter(onLine, maxLine);
  }

  /** Throws FramingError when a line that goes to `onLine` passes the cap (a skipped one is never held). */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.state === "line") this.lines.push(chunk.subarray(start, nl === -1 ? end : nl + 1));
      else if (this.state === "head") this.peek(chunk.subarray(start, end), nl !== -1);
      if (nl === -1) return;
      this.state = "head";
      start = nl + 1;
    }
  }

  private peek(part: Buffer, complete: boolean): void {
    this.parts.push(part);
    this.length += part.length;
    // Joined again at each chunk only while the hook asks for more: the head it needs is short.
    if (this.parts.length > 1) this.parts = [Buffer.concat(this.parts, this.length)];
    const verdict = this.length > this.maxLine ? "line" : this.head(this.parts[0]!, complete);
    if (verdict === "more" && !complete) return;
    const parts = this.parts;
    this.parts = [];
    this.length = 0;
    if (verdict === "taken") {
      this.state = "skip";
      return;
    }
    this.state = "line";
    for (const p of parts) this.lines.push(p);
    if (complete) this.lines.push(NEWLINE_BYTES);
  }
}
