// Brain's side of the JSON-RPC conversation with a nui extension host over one byte stream (a child's stdio or
// a TCP socket; docs/protocol.md#json-rpc-over-stdio-or-tcp-extension-hosts). The protocol has no
// host-to-Brain requests: one is refused, so the host does not wait forever, and reported.
import { ExactBytes } from "../../protocol/fast-lines.js";
import { clip, RpcPeer } from "../../protocol/jsonrpc.js";
import { MAX_FRAME } from "../../protocol/ndjson.js";
import { HARNESS_METHODS } from "../../protocol/nui/jsonrpc.js";

export interface RpcPeerEvents {
  onNotification(method: string, params: unknown): void;
  onWarning(message: string): void;
  /** The running run, whose text events go to it straight from the stream's bytes (see textLine). */
  textSink?(): TextSink | undefined;
}

export interface TextSink {
  runId: string;
  /**
   * A text event's content: bytes [start, end) of `buf` (`view` is a DataView of it). Taken, as the generic decode's
   * notification would be, when plain (no quote, backslash or control character) and valid UTF-8: returns whether
   * it was; when not, nothing is done and the line is decoded as any other.
   */
  plainText(buf: Buffer, start: number, end: number, view: DataView): boolean;
}

// A text event spelled as hosts write one (nui's SDKs, Brain's): these members in this order, no whitespace.
const HEAD = '{"jsonrpc":"2.0","method":"harness.event","params":{"runId":"';
const MID = '","type":"text","content":"';
const [NEWLINE, QUOTE, BRACE] = [0x0a, 0x22, 0x7d];
/** A run id JSON writes as it is. */
const PLAIN_ID = /^[^"\\\u0000-\u001f]*$/;

/**
 * Takes a text event for the running run straight from the bytes: a line that is, byte for byte, HEAD, the run's
 * id, MID, plain valid UTF-8 content, `"}}`. The generic decode would give that very notification
 * ({runId, type: "text", content}) to onNotification, which hands the content to the same run; any other line
 * (another run, spelling, an escape) is left to it. Returns where the next line starts, or -1.
 */
function textLine(
  events: RpcPeerEvents,
): ((chunk: Buffer, pos: number, view: DataView) => number) | undefined {
  const textSink = events.textSink;
  if (!textSink) return undefined;
  let prefixFor: string | undefined;
  let prefix = new ExactBytes(Buffer.alloc(0));
  return (chunk, pos, view) => {
    const sink = textSink();
    if (!sink) return -1;
    if (sink.runId !== prefixFor) {
      prefixFor = sink.runId;
      const plain = PLAIN_ID.test(sink.runId);
      prefix = new ExactBytes(plain ? Buffer.from(`${HEAD}${sink.runId}${MID}`) : Buffer.alloc(0));
    }
    if (prefix.length === 0 || !prefix.at(chunk, view, pos)) return -1;
    const start = pos + prefix.length;
    // Plain content holds no newline (nor would JSON's string): the first one ends the line, `"}}` before it. Found
    // natively, it gives the content's end before its bytes are read, so they are checked and copied in one pass.
    const nl = chunk.indexOf(NEWLINE, start);
    const end = nl - 3;
    if (
      nl === -1 ||
      end < start ||
      nl - pos > MAX_FRAME ||
      chunk[end] !== QUOTE ||
      chunk[end + 1] !== BRACE ||
      chunk[end + 2] !== BRACE
    )
      return -1;
    return sink.plainText(chunk, start, end, view) ? nl + 1 : -1;
  };
}

/** Output queued to a host past which its requests get no reply: it does not read, and each reply queues more. */
export const MAX_QUEUED_FOR_REPLIES = 1 << 20;

/** `queued`: bytes written to the host and not yet taken by it (its stdin's or socket's writableLength). */
export function hostPeer(
  write: (text: string) => void,
  events: RpcPeerEvents,
  queued: () => number = () => 0,
): RpcPeer {
  const peer: RpcPeer = new RpcPeer(write, {
    who: "extension host",
    // nui's SDKs (Brain's TypeScript one with Brain's own reader) read lines up to the frame cap, as Brain does.
    maxLine: {
      bytes: MAX_FRAME,
      reader: "an extension host",
      advice: (method) =>
        method === HARNESS_METHODS.run
          ? "shorten the prompt or the system prompt (they travel together, with the agent's session id)"
          : "send less",
    },
    fastLine: textLine(events),
    onNotification: (method, params) => events.onNotification(method, params),
    onWarning: (message) => events.onWarning(message),
    onRequest: (id, method) => {
      const name = clip(method);
      if (queued() < MAX_QUEUED_FOR_REPLIES)
        peer.respondError(id, -32601, `Brain does not serve method "${name}"`);
      events.onWarning(`extension host called "${name}", which Brain does not serve`);
    },
  });
  return peer;
}
