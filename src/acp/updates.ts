// Brain's session events as ACP `session/update`s: what an editor shows while a turn runs, and what
// `session/load` replays. Events with no ACP counterpart (turn bookkeeping, checkpoints) are left out.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { bareBase64, imageTypeOf } from "../core/image-bytes.js";
import { unstreamedMessages } from "../core/message-text.js";
import type { SessionEvent } from "../protocol/events.js";

export interface UpdateOptions {
  /** session/load's replay of the log, rather than a turn as it runs. */
  replaying: boolean;
  /**
   * The editor advertised `session.notices`: ACP allows a `notice` only then, and only live (notices are not
   * session history), so a harness.warning is left out otherwise.
   */
  notices: boolean;
}

/** One session's events, in log order, as updates: each message's text once (see unstreamedMessages). */
export function sessionUpdates(options: UpdateOptions): (event: SessionEvent) => SessionUpdate[] {
  const unstreamed = unstreamedMessages();
  return (event) => {
    const whole = unstreamed(event);
    if (whole !== undefined)
      return [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: whole } }];
    if (event.type === "user.prompt" && options.replaying) return promptReplayed(event.data);
    const update = toSessionUpdate(event, options);
    return update ? [update] : [];
  };
}

/**
 * A prompt as it was sent: its text, then each image whose bytes the log holds (as every image from an editor does;
 * ACP has no way to show one given by a path on the daemon's host). ACP wants bare base64 and a type: a client may
 * have sent the base64 behind a data: URL prefix, and no type (the daemon recognises PNG, JPEG, GIF and WebP).
 */
function promptReplayed({
  text,
  images = [],
}: Extract<SessionEvent, { type: "user.prompt" }>["data"]): SessionUpdate[] {
  const chunks = images.flatMap(({ mime_type, data }): SessionUpdate[] => {
    if (!data) return [];
    const { base64, declared } = bareBase64(data);
    // 16 base64 characters are the 12 bytes imageTypeOf looks at.
    const mimeType = mime_type ?? declared ?? imageTypeOf(Buffer.from(base64.slice(0, 16), "base64"));
    return mimeType
      ? [{ sessionUpdate: "user_message_chunk", content: { type: "image", mimeType, data: base64 } }]
      : [];
  });
  return text !== "" || chunks.length === 0
    ? [{ sessionUpdate: "user_message_chunk", content: { type: "text", text } }, ...chunks]
    : chunks;
}

/** One event as an update, on its own: an assistant.message is left to sessionUpdates, which knows what streamed. */
export function toSessionUpdate(
  event: SessionEvent,
  { replaying, notices }: UpdateOptions,
): SessionUpdate | undefined {
  switch (event.type) {
    case "user.prompt":
      // Live, the editor shows what it sent itself; on load it has only the log.
      return replaying
        ? { sessionUpdate: "user_message_chunk", content: { type: "text", text: event.data.text } }
        : undefined;
    case "user.steer":
      return { sessionUpdate: "user_message_chunk", content: { type: "text", text: event.data.text } };
    case "assistant.delta":
      return { sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.data.text } };
    case "image":
      return {
        sessionUpdate: "agent_message_chunk",
        content: { type: "image", mimeType: event.data.mime_type, data: event.data.data },
      };
    case "tool.call":
      return {
        sessionUpdate: "tool_call",
        toolCallId: event.data.id,
        title: event.data.name,
        kind: "other",
        status: "in_progress",
        rawInput: event.data.arguments,
      };
    case "tool.result":
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: event.data.id,
        status: event.data.is_error ? "failed" : "completed",
        content: event.data.content.map((c) => ({
          type: "content" as const,
          content: { type: "text" as const, text: c.text },
        })),
      };
    case "harness.warning":
      // A notice's title may not be empty.
      return notices && !replaying
        ? { sessionUpdate: "notice", severity: "warning", title: event.data.message || "warning" }
        : undefined;
    default:
      return undefined;
  }
}

/**
 * What an editor is told of the MCP servers its session/new named: Brain starts none of them (a daemon, perhaps on
 * another machine, would run commands an editor chose), and says so once, ahead of the first turn's reply.
 */
export function mcpServersNotStarted(names: string[], notices: boolean): SessionUpdate {
  const title = `Brain did not start the MCP servers this editor gave it (${names.join(", ")}): a Brain daemon, which may run on another machine, starts no commands an editor names. Give a session MCP servers in its agent definition (aiAssets.mcpServers) or config.options.mcp_servers.`;
  return notices
    ? { sessionUpdate: "notice", severity: "warning", title }
    : { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${title}\n\n` } };
}
