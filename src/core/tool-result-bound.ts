// One bound on what a tool result puts in the log, for every harness family: Brain's bound tools (ToolCalls) and
// the results a harness reports of its own tools (emitted events) alike. A result of tens of MB (a file read whole,
// an MCP server's answer) went whole to every SSE watcher and every log read, and the cluster store refused it.
// The cut keeps the start and the end (where a command's error is) and says how much is left out.
import { MAX_TOOL_RESULT_BYTES, type NewEvent, type ToolResultCut } from "../protocol/events.js";
import type { ToolResult } from "../protocol/runner.js";

/** JSON bytes of one part beside its text: `{"type":"text","text":""},`. */
const PART_BYTES = 27;
/** Bytes kept free in each cut part for the note that says what is left out. */
const NOTE_BYTES = 256;
/** JSON bytes a character may take at most (a control character's `\u0000`). */
const MAX_CHAR_BYTES = 6;

/**
 * `result` with its text within `max` bytes JSON-encoded (`result` itself when it was), and what was cut. Many
 * parts whose framing alone would pass a good share of the bound are joined into one first, as a model sees them.
 */
export function boundedResult(
  result: ToolResult,
  max = MAX_TOOL_RESULT_BYTES,
): { result: ToolResult; truncated?: ToolResultCut } {
  let chars = 0;
  for (const part of result.content) chars += part.text.length;
  // Most results are short enough that no encoding can take them past the bound: nothing is measured.
  if (chars * MAX_CHAR_BYTES + result.content.length * PART_BYTES <= max) return { result };
  const joined = result.content.length * PART_BYTES > max / 4;
  const texts = joined
    ? [result.content.map((part) => part.text).join("\n")]
    : result.content.map((p) => p.text);
  const sizes = texts.map(jsonBytes);
  if (!joined && sizes.reduce((sum, size) => sum + size + PART_BYTES, 0) <= max) return { result };
  const budget = Math.max(0, max - texts.length * (PART_BYTES + NOTE_BYTES));
  const shares = fairShares(sizes, budget);
  let omitted = 0;
  const content = texts.map((text, i) => {
    if (sizes[i]! <= shares[i]!) return { type: "text" as const, text };
    const [head, tail] = ends(text, sizes[i]!, shares[i]!);
    const left = text.length - head.length - tail.length;
    omitted += left;
    return { type: "text" as const, text: `${head}${note(left, max)}${tail}` };
  });
  return {
    result: { content, is_error: result.is_error },
    truncated: { total_chars: chars, omitted_chars: omitted },
  };
}

/** `event` with its tool result within the bound (see boundedResult); any other event as it is. */
export function boundedEvent(event: NewEvent): NewEvent {
  if (event.type !== "tool.result" || event.data.truncated) return event;
  const bounded = boundedResult(event.data);
  if (!bounded.truncated) return event;
  return { ...event, data: { ...event.data, ...bounded.result, truncated: bounded.truncated } };
}

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

const note = (left: number, max: number) =>
  `\n\n[… ${left} characters of this tool result left out: Brain keeps at most ${max >> 10} KiB of one; ask the tool for less, e.g. a range of lines …]\n\n`;

/** The start (three quarters) and end (a quarter) of `text` (`size` bytes JSON-encoded) within `share` bytes. */
function ends(text: string, size: number, share: number): [string, string] {
  let keep = Math.floor((text.length * share) / size);
  for (;;) {
    const head = text.slice(0, whole(text, Math.ceil((keep * 3) / 4)));
    const tail = text.slice(whole(text, text.length - Math.floor(keep / 4)));
    if (keep === 0 || jsonBytes(head) + jsonBytes(tail) <= share) return [head, tail];
    keep = Math.floor(keep * 0.9);
  }
}

/** `at`, moved back off the second half of a surrogate pair: a cut never leaves half a character. */
function whole(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return at > 0 && code >= 0xdc00 && code <= 0xdfff ? at - 1 : at;
}

/** Bytes each part of these `sizes` may keep so that together they stay within `budget`: short ones whole. */
function fairShares(sizes: number[], budget: number): number[] {
  const order = sizes.map((size, i) => ({ size, i })).sort((a, b) => a.size - b.size);
  const shares = new Array<number>(sizes.length);
  let left = budget;
  order.forEach(({ size, i }, at) => {
    shares[i] = Math.min(size, Math.floor(left / (order.length - at)));
    left -= shares[i]!;
  });
  return shares;
}
