// Claude Code's stream-json output (`claude -p --output-format stream-json --verbose --include-partial-messages`)
// mapped to Brain: text deltas from the raw `stream_event`s, one `assistant.message` per model message (its text,
// usage and stop reason; the turn's cost rides on the last one), `tool.call` from `tool_use` blocks,
// `tool.result` from the `user` messages that carry results, permission requests from `can_use_tool` control
// requests, and the turn's end from `result`. Sub-agent traffic (`parent_tool_use_id` set) is not the
// session's conversation and is skipped. Types this parser does not know are skipped too, each said once (see
// UnknownTypes).
import { asRecord, type CliEvent, type CliTurnEnd, contentText, event, usageOf } from "../cli/events.js";
import { UnknownTypes } from "../cli/unknown-types.js";

// biome-ignore lint/suspicious/noExplicitAny: third-party output, decoded leniently
type Json = any;

export type ClaudeSignal =
  | { kind: "event"; event: CliEvent }
  | { kind: "session"; id: string }
  | {
      kind: "permission";
      requestId: string;
      tool: string;
      input: Record<string, unknown>;
      reason?: string;
      /** The tool_use block the request is for (Claude Code's tool_use_id): its tool.call's id. */
      toolUseId?: string;
    }
  /** A control request Brain does not serve: it must still be answered, with an error. */
  | { kind: "control-unsupported"; requestId: string; subtype: string }
  | { kind: "control-response"; requestId: string; error?: string }
  | { kind: "end"; end: CliTurnEnd }
  /** The first line (or stream event) of a type this parser does not know (a newer Claude Code's). */
  | { kind: "unknown"; type: string };

/** The stdout message types Claude Code 2.1 has (its SDK's) that Brain has no use for. */
const SKIPPED_LINES = new Set([
  ...["keep_alive", "control_cancel_request", "tool_progress", "tool_use_summary", "auth_status"],
  ...["rate_limit_event", "prompt_suggestion", "streamlined_text", "streamlined_tool_use_summary"],
]);
/** The Messages API stream events Brain does not read (the stream_event lines' `event`). */
const SKIPPED_STREAM_EVENTS = new Set(["content_block_start", "content_block_stop", "ping", "error"]);

interface ModelMessage {
  id: string;
  text: string;
  /** Deltas were seen for it: no need to send its text again as one delta. */
  streamed: boolean;
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  stopReason?: string;
  finished: boolean;
}

export class ClaudeStreamParser {
  private current: ModelMessage | undefined;
  /** The session's running cost as the CLI reports it (cumulative per process). */
  private costSoFar = 0;
  /**
   * The uuid of the last conversation message the CLI printed. Its transcript record carries the same uuid, and
   * the CLI appends it to the transcript only after printing (even after the turn's `result`).
   */
  lastRecord: string | undefined;
  private readonly unknownLines = new UnknownTypes(SKIPPED_LINES);
  private readonly unknownStreamEvents = new UnknownTypes(SKIPPED_STREAM_EVENTS);

  /** One decoded stdout line in, what it means out. */
  handle(line: Json): ClaudeSignal[] {
    if (line === null || typeof line !== "object") return [];
    if ((line.type === "assistant" || line.type === "user") && !line.parent_tool_use_id) {
      if (typeof line.uuid === "string") this.lastRecord = line.uuid;
    }
    switch (line.type) {
      case "system":
        return line.subtype === "init" && typeof line.session_id === "string"
          ? [{ kind: "session", id: line.session_id }]
          : [];
      case "stream_event":
        return line.parent_tool_use_id ? [] : this.onStreamEvent(line.event);
      case "assistant":
        return line.parent_tool_use_id ? [] : this.onAssistant(line.message);
      case "user":
        return line.parent_tool_use_id ? [] : this.onUser(line.message);
      case "result":
        return this.onResult(line);
      case "control_request":
        return this.onControlRequest(line);
      case "control_response": {
        const response = line.response ?? {};
        return [
          {
            kind: "control-response",
            requestId: String(response.request_id ?? ""),
            ...(response.subtype === "error" ? { error: String(response.error ?? "error") } : {}),
          },
        ];
      }
      default:
        return unknown(this.unknownLines.first(line.type));
    }
  }

  private onStreamEvent(ev: Json): ClaudeSignal[] {
    switch (ev?.type) {
      case "message_start": {
        const out = this.flush();
        const usage = ev.message?.usage ?? {};
        this.current = {
          id: String(ev.message?.id ?? ""),
          text: "",
          streamed: false,
          input: usage.input_tokens,
          cacheRead: usage.cache_read_input_tokens,
          cacheWrite: usage.cache_creation_input_tokens,
          finished: false,
        };
        return out;
      }
      case "content_block_delta":
        if (ev.delta?.type === "text_delta" && typeof ev.delta.text === "string" && ev.delta.text !== "") {
          if (this.current) this.current.streamed = true;
          return [{ kind: "event", event: event.delta(ev.delta.text) }];
        }
        return [];
      case "message_delta":
        if (this.current) {
          if (typeof ev.delta?.stop_reason === "string") this.current.stopReason = ev.delta.stop_reason;
          const usage = ev.usage ?? {};
          if (usage.output_tokens !== undefined) this.current.output = usage.output_tokens;
          if (usage.input_tokens !== undefined && usage.input_tokens !== null)
            this.current.input = usage.input_tokens;
        }
        return [];
      case "message_stop":
        if (!this.current) return [];
        this.current.finished = true;
        // The turn's last message waits for `result`, which carries the cost; the others go out now.
        return this.current.stopReason === "end_turn" ? [] : this.flush();
      default:
        return unknown(this.unknownStreamEvents.first(ev?.type), "stream_event ");
    }
  }

  /** Claude sends one `assistant` line per content block, before that block's stop. */
  private onAssistant(message: Json): ClaudeSignal[] {
    const out: ClaudeSignal[] = [];
    const id = String(message?.id ?? "");
    if (!this.current || this.current.id !== id) {
      out.push(...this.flush());
      const usage = message?.usage ?? {};
      this.current = {
        id,
        text: "",
        streamed: false,
        input: usage.input_tokens,
        output: usage.output_tokens,
        finished: false,
      };
    }
    const current = this.current!;
    for (const block of Array.isArray(message?.content) ? message.content : []) {
      if (block?.type === "text" && typeof block.text === "string") {
        if (!current.streamed && block.text !== "")
          out.push({ kind: "event", event: event.delta(block.text) });
        current.text += block.text;
      } else if (block?.type === "tool_use") {
        out.push({ kind: "event", event: event.toolCall(String(block.id), String(block.name), block.input) });
      }
    }
    return out;
  }

  private onUser(message: Json): ClaudeSignal[] {
    const out: ClaudeSignal[] = [];
    for (const block of Array.isArray(message?.content) ? message.content : []) {
      if (block?.type !== "tool_result") continue;
      const text = contentText(block.content);
      out.push({
        kind: "event",
        event: event.toolResult(String(block.tool_use_id), text, block.is_error === true),
      });
    }
    return out;
  }

  private onResult(line: Json): ClaudeSignal[] {
    const total = typeof line.total_cost_usd === "number" ? line.total_cost_usd : undefined;
    const turnCost = total === undefined ? undefined : Math.max(0, total - this.costSoFar);
    if (total !== undefined) this.costSoFar = total;
    const out = this.flush(turnCost);
    let end: CliTurnEnd;
    if (line.subtype === "success" && line.is_error !== true) end = { outcome: "completed" };
    else if (typeof line.terminal_reason === "string" && line.terminal_reason.startsWith("aborted")) {
      end = { outcome: "aborted" };
    } else {
      const detail =
        (Array.isArray(line.errors) && line.errors.length > 0 ? line.errors.join("; ") : undefined) ??
        (typeof line.result === "string" && line.result !== "" ? line.result : undefined) ??
        String(line.subtype ?? "error");
      // A status from the model API means the provider failed; anything else is the CLI's own trouble.
      const code = line.api_error_status ? "provider_error" : "brain_error";
      end = { outcome: "failed", code, message: `claude-code: ${detail}` };
    }
    out.push({ kind: "end", end });
    return out;
  }

  private onControlRequest(line: Json): ClaudeSignal[] {
    const requestId = String(line.request_id ?? "");
    const request = line.request ?? {};
    if (request.subtype === "can_use_tool") {
      return [
        {
          kind: "permission",
          requestId,
          tool: String(request.tool_name ?? "unknown"),
          input: asRecord(request.input),
          ...(typeof request.description === "string" ? { reason: request.description } : {}),
          ...(typeof request.tool_use_id === "string" ? { toolUseId: request.tool_use_id } : {}),
        },
      ];
    }
    return [{ kind: "control-unsupported", requestId, subtype: String(request.subtype ?? "unknown") }];
  }

  /** Emits the message in progress, if any; an unfinished one (an interrupt cut it short) says so. */
  private flush(cost?: number): ClaudeSignal[] {
    const message = this.current;
    this.current = undefined;
    if (!message) return [];
    const usage = usageOf({
      input: message.input,
      output: message.output,
      cacheRead: message.cacheRead,
      cacheWrite: message.cacheWrite,
      cost,
    });
    // Cut short by an interrupt: no stop at all, or (2.1.3xx) a stop without a reason.
    const stop = message.finished ? (message.stopReason ?? "aborted") : "aborted";
    return [{ kind: "event", event: event.message(message.text, usage, stop) }];
  }
}

function unknown(type: string | undefined, prefix = ""): ClaudeSignal[] {
  return type === undefined ? [] : [{ kind: "unknown", type: `${prefix}${type}` }];
}
