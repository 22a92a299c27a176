// What a client that shows a session's text as it streams must show of its messages: an assistant.message
// carries the text its deltas already streamed, so it adds nothing, unless nothing streamed. A compacted log
// keeps a completed turn's message and drops its deltas, so a view of deltas alone shows none of its replies.
import type { SessionEvent } from "../protocol/events.js";

/**
 * Fed a session's events in log order, answers the text of each assistant.message that streamed nothing (to show
 * whole), and undefined for every other event.
 */
export function unstreamedMessages(): (event: SessionEvent) => string | undefined {
  // The turn whose deltas came since the last message, or null when none did.
  let streamedIn: string | undefined | null = null;
  return (event) => {
    if (event.type === "assistant.delta") streamedIn = event.turn;
    if (event.type !== "assistant.message") return undefined;
    const streamed = streamedIn !== null && streamedIn === event.turn;
    streamedIn = null;
    return streamed || event.data.text === "" ? undefined : event.data.text;
  };
}
