// Brain's events as ACP session/updates: each message's text shown once, as its deltas or (when it streamed
// nothing, as in a compacted log) whole.
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { sessionUpdates } from "./updates.js";

const log = (events: NewEvent[]): SessionEvent[] =>
  events.map((e, i) => ({ ...e, seq: i + 1, ts: "2026-01-01T00:00:00.000Z", session: "s" }) as SessionEvent);

const agentText = (events: SessionEvent[]) => {
  const updates = sessionUpdates({ replaying: true, notices: false });
  return events.flatMap((e) => {
    return updates(e).flatMap((update) =>
      update.sessionUpdate === "agent_message_chunk" && update.content.type === "text"
        ? [update.content.text]
        : [],
    );
  });
};

describe("sessionUpdates", () => {
  it("shows a streamed message as its deltas, and one that streamed nothing whole", () => {
    const events = log([
      // Interrupted: deltas and no message.
      { type: "assistant.delta", turn: "a", data: { text: "cut " } },
      { type: "turn.settled", turn: "a", data: { status: "interrupted" } },
      // Compacted: the message alone.
      { type: "assistant.message", turn: "b", data: { text: "whole" } },
      // Streamed: deltas, then the message holding the same text.
      { type: "assistant.delta", turn: "c", data: { text: "stre" } },
      { type: "assistant.delta", turn: "c", data: { text: "amed" } },
      { type: "assistant.message", turn: "c", data: { text: "streamed" } },
      { type: "tool.call", turn: "c", data: { id: "t1", name: "echo", arguments: {} } },
      { type: "assistant.message", turn: "c", data: { text: "after the tool" } },
    ]);
    expect(agentText(events)).toEqual(["cut ", "whole", "stre", "amed", "after the tool"]);
  });

  it("replays a prompt's text and each image the log holds, as the editor sent them", () => {
    const [prompt] = log([
      {
        type: "user.prompt",
        turn: "a",
        data: {
          text: "what is this?",
          images: [{ mime_type: "image/png", data: "iVBORw0K" }, { path: "/srv/x.png" }],
        },
      },
    ]);
    expect(sessionUpdates({ replaying: true, notices: false })(prompt!)).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "what is this?" } },
      {
        sessionUpdate: "user_message_chunk",
        content: { type: "image", mimeType: "image/png", data: "iVBORw0K" },
      },
    ]);
    // Live, the editor shows what it sent itself.
    expect(sessionUpdates({ replaying: false, notices: false })(prompt!)).toEqual([]);
  });

  it("replays an image a client sent without its type or behind a data: URL as an ACP image: a type and bare base64", () => {
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const [prompt] = log([
      {
        type: "user.prompt",
        turn: "a",
        data: {
          text: "look",
          images: [{ data: png }, { data: `data:image/png;base64,${png}` }, { data: "bm90IGFuIGltYWdl" }],
        },
      },
    ]);
    const image = {
      sessionUpdate: "user_message_chunk",
      content: { type: "image", mimeType: "image/png", data: png },
    };
    // Left out, both: only an image with a mime_type was replayed, and its data: prefix went with it.
    expect(sessionUpdates({ replaying: true, notices: false })(prompt!)).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "look" } },
      image,
      image,
    ]);
  });
});
