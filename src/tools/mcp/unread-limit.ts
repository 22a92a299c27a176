// A bound on what Brain has written to an MCP peer over a stream and the peer has not read yet.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { UNREAD_INPUT_LIMITS } from "../../protocol/unread-input.js";

/**
 * Counts what has been handed to the peer and not yet taken by it (the SDK's stdio sends settle once the pipe or
 * socket takes the message), and calls `overflow` instead of writing past `max`.
 */
export function limitUnreadInput(
  transport: { send(message: JSONRPCMessage): Promise<void> },
  max: typeof UNREAD_INPUT_LIMITS,
  overflow: (why: string) => void,
): void {
  const send = transport.send.bind(transport);
  let unread = 0;
  let messages = 0;
  transport.send = (message: JSONRPCMessage) => {
    const bytes = JSON.stringify(message).length;
    if (unread + bytes > max.bytes || messages >= max.messages) {
      const why =
        `it did not read its input (${messages} messages, ${unread} bytes from Brain waiting; ` +
        `the limit is ${max.messages} messages or ${max.bytes} bytes)`;
      overflow(why);
      return Promise.reject(new Error(`not sent: ${why}`));
    }
    unread += bytes;
    messages++;
    const sent = send(message);
    const taken = () => {
      unread -= bytes;
      messages--;
    };
    sent.then(taken, taken);
    return sent;
  };
}
