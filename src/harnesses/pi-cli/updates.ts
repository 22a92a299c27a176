// pi's `message_update` lines read from their start only. Each repeats the whole partial message twice (the
// event's `partial` and the line's `message`), so decoding them whole costs the square of a long answer (or of a
// large file written through a tool call) on the daemon's event loop, which every session shares. What Brain
// uses of them, the event's type and a text delta, pi writes first (pi-agent-core emits
// `{type, assistantMessageEvent: {type, contentIndex, delta, partial}, message}` and pi-ai builds every delta
// event in that order):
//   {"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"…","partial":…
// The line's head is decoded into what the parser reads of it, and the rest is skipped; a line in any other shape
// goes whole to the JSON decoder as before.
import type { LineHead } from "../../protocol/head-lines.js";

const UPDATE = Buffer.from('{"type":"message_update","assistantMessageEvent":{"type":"');
const DELTA = /^,"contentIndex":(-?\d{1,9}),"delta":"/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longer than any event type or the `contentIndex` between it and the delta. */
const NAME_MAX = 64;

/** A LineHead for pi's stdout: a `message_update` goes to `read` as the parser needs it, decoded from its head. */
export function piUpdateHead(read: (message: unknown) => void): LineHead {
  return (head, complete) => {
    const known = Math.min(head.length, UPDATE.length);
    if (head.compare(UPDATE, 0, known, 0, known) !== 0) return "line";
    const typeEnd = head.indexOf(QUOTE, UPDATE.length);
    if (typeEnd === -1 || typeEnd > UPDATE.length + NAME_MAX) return wait(head, UPDATE.length, complete);
    const type = head.toString("latin1", UPDATE.length, typeEnd);
    if (type !== "text_delta") {
      read({ type: "message_update", assistantMessageEvent: { type } });
      return "taken";
    }
    const between = DELTA.exec(head.toString("latin1", typeEnd + 1, typeEnd + 1 + NAME_MAX));
    if (!between) return wait(head, typeEnd, complete);
    const open = typeEnd + between[0].length;
    const close = closingQuote(head, open + 1);
    if (close === -1) return complete ? "line" : "more";
    let delta: unknown;
    try {
      delta = JSON.parse(head.toString("utf8", open, close + 1));
    } catch {
      return "line"; // decoded whole, it is refused as the line that is not JSON it is
    }
    read({
      type: "message_update",
      assistantMessageEvent: { type, contentIndex: Number(between[1]), delta },
    });
    return "taken";
  };
}

/** More of the head may still show the expected shape, unless the line is whole or already past it. */
function wait(head: Buffer, from: number, complete: boolean): "line" | "more" {
  return complete || head.length > from + NAME_MAX ? "line" : "more";
}

/** Where the JSON string whose contents start at `start` ends: its first quote not escaped by a backslash. */
function closingQuote(head: Buffer, start: number): number {
  for (let at = head.indexOf(QUOTE, start); at !== -1; at = head.indexOf(QUOTE, at + 1)) {
    let slashes = 0;
    while (head[at - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
  }
  return -1;
}
