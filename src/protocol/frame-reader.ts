// A runner's stdout as frames, with the relay's common case read straight from the chunk's bytes: a delta that
// repeats the attachment and turn of the last delta decoded for its attachment (a shared runner's sessions
// interleave), spelled as runners write it, its text valid UTF-8 with nothing JSON would escape. Such a line
// makes no string of its own (nor of its text: the log copies the bytes, see verbatimBytes);
// decodeRunnerFrameFast would have returned the same frame from it, since the bytes match, one for one, the line
// it accepts for these ids and that text. Every other line goes through LineSplitter and decodeRunnerFrameFast
// (and so the zod reference), which keep every rule: the 4 MiB cap, escapes, other members or spellings, bad
// UTF-8 (replaced by U+FFFD there, as before). frame-reader.test.ts holds the two ways to the same frames and
// errors on generated streams cut into random chunks.
import {
  DELTA_HEAD,
  DELTA_TEXT,
  DELTA_TURN,
  decodeRunnerFrameFast,
  type SeenIds,
  verbatimBytes,
} from "./fast-frames.js";
import { ExactBytes, FastLineSplitter, plainToken } from "./fast-lines.js";
import { MAX_FRAME } from "./ndjson.js";
import type { RunnerToBrainFrame } from "./runner.js";

/** A delta frame read from the bytes: `{attachment, turn, event: "assistant.delta", data}`. */
export type DeltaHandler = (attachment: string, turn: string, data: { readonly text: string }) => void;

const [NEWLINE, BRACE, QUOTE] = [0x0a, 0x7d, 0x22];
const HEAD = new ExactBytes(Buffer.from(DELTA_HEAD));
/**
 * How many attachments' ids a reader remembers (past it, it starts over): a shared runner's sessions, whose
 * deltas interleave line by line, so that each finds its own.
 */
const KNOWN_ATTACHMENTS = 1024;
/** Longer attachment ids are not looked up from the bytes (their deltas go through decode). */
const KEY_BYTES = 256;

/** The ids of an attachment's last delta decoded, and the bytes a delta of those ids starts with, up to its text. */
interface Known {
  ids: SeenIds;
  prefix: ExactBytes;
}

export class RunnerFrameReader {
  private readonly splitter: FastLineSplitter;
  private readonly seen: SeenIds = { attachment: "", turn: "" };
  /**
   * Per attachment, keyed by its id's bytes as latin1 (what `delta` finds between the head and the next quote):
   * one remembered prefix alone missed nearly every delta of a shared runner (1.3 % were read from the bytes with
   * 100 sessions streaming), and each miss made a line, a frame and a new prefix of its own.
   */
  private readonly known = new Map<string, Known>();
  private last: SeenIds = { attachment: "", turn: "" };

  /**
   * `onLine` gets every line not read from the bytes (decode it with `decode`, which may throw ProtocolError);
   * `onDelta` the deltas that were, as the parts of their frame (`{attachment, turn, event: "assistant.delta",
   * data}`): no frame object is made for them, as the caller makes its event of them. Both are called in stream
   * order.
   */
  constructor(
    onLine: (line: string) => void,
    private readonly onDelta: DeltaHandler,
  ) {
    this.splitter = new FastLineSplitter(onLine, (chunk, pos, view) => this.delta(chunk, pos, view));
  }

  /** One line as a frame (decodeRunnerFrameFast); throws ProtocolError for an invalid one. */
  decode(line: string): RunnerToBrainFrame {
    const frame = decodeRunnerFrameFast(line, this.seen);
    const { attachment, turn } = this.seen;
    if (attachment !== this.last.attachment || turn !== this.last.turn) this.remember(attachment, turn);
    return frame;
  }

  /** The ids of the delta just decoded: later deltas of them are read from the bytes. */
  private remember(attachment: string, turn: string): void {
    const ids = { attachment, turn };
    this.last = ids;
    const key = Buffer.from(attachment).toString("latin1");
    if (this.known.get(key)?.ids.turn === turn) return;
    if (this.known.size >= KNOWN_ATTACHMENTS) this.known.clear();
    const prefix = new ExactBytes(Buffer.from(`${DELTA_HEAD}${attachment}${DELTA_TURN}${turn}${DELTA_TEXT}`));
    this.known.set(key, { ids, prefix });
  }

  /** Throws FramingError when a line passes the cap (from LineSplitter); unusable after that. */
  push(chunk: Buffer): void {
    this.splitter.push(chunk);
  }

  /** Bytes of an unfinished line still held. */
  get buffered(): number {
    return this.splitter.buffered;
  }

  /** At end of stream: a half-written last line is a FramingError. */
  end(): void {
    this.splitter.end();
  }

  /**
   * When the line at `pos` is a delta of the known ids whose text is plain (see the file's comment), passes it
   * on and returns where the next line starts; otherwise -1, having passed on nothing.
   */
  private delta(chunk: Buffer, pos: number, view: DataView): number {
    if (this.known.size === 0 || !HEAD.at(chunk, view, pos)) return -1;
    const a = pos + HEAD.length;
    const aEnd = chunk.indexOf(QUOTE, a);
    if (aEnd === -1 || aEnd - a > KEY_BYTES) return -1;
    const known = this.known.get(chunk.toString("latin1", a, aEnd));
    // The whole prefix is compared: the id's bytes, the turn's and the rest, exactly as decode accepted them.
    if (known === undefined || !known.prefix.at(chunk, view, pos)) return -1;
    const prefix = known.prefix;
    const start = pos + prefix.length;
    const i = plainToken(chunk, start, view);
    // The line must end right after the text: `"}}` and its newline, all in this chunk.
    if (
      i === -1 ||
      i + 3 >= chunk.length ||
      chunk[i + 1] !== BRACE ||
      chunk[i + 2] !== BRACE ||
      chunk[i + 3] !== NEWLINE
    )
      return -1;
    if (i + 3 - pos > MAX_FRAME) return -1; // LineSplitter refuses it
    const ids = known.ids;
    this.onDelta(ids.attachment, ids.turn, verbatimBytes(chunk, start, i));
    return i + 4;
  }
}
