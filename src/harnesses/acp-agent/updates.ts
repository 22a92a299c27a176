// An ACP agent's session/update notifications as Brain events, the way the CLI families report what their
// agents do: message chunks are assistant.delta, and the text between tool calls closes as one
// assistant.message; tool_call / tool_call_update are tool.call and tool.result under the agent's own tool
// names (Brain does not run these tools, it logs them). Pure and fed one update at a time, so it is tested on
// captured notifications.
//
// Agents announce a tool call before its input is known (claude-agent-acp streams `tool_call` at the start of
// the model's tool block, with `rawInput: {}`), so tool.call is logged when the call is first asked about,
// starts, ends, or the turn ends, with the input known by then.
//
// Left out: thoughts and plans (Brain's log has no event for either), the context-window `usage_update`
// (Usage counts a turn's tokens, not the window), and the agent's own bookkeeping (commands, modes, session info).

import type { Usage } from "../../protocol/runner.js";
import { asRecord, type CliEvent, event, usageOf } from "../cli/events.js";

// biome-ignore lint/suspicious/noExplicitAny: third-party notifications, decoded leniently
type Json = any;

interface ToolState {
  name: string;
  input: Record<string, unknown>;
  logged: boolean;
  done: boolean;
}

export interface ToolUseInfo {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  title?: string;
}

export class AcpUpdateMapper {
  private text = "";
  /**
   * `reader`: the agent's own tool name and arguments read from an update, for agents that do not say them
   * plainly (AcpProfile.toolName, toolArguments).
   */
  constructor(
    private readonly reader: {
      toolName?(update: Json): string | undefined;
      toolArguments?(update: Json): Record<string, unknown> | undefined;
    } = {},
  ) {}

  private readonly tools = new Map<string, ToolState>();

  /** Forgets what the previous turn left open (a new prompt starts a new message, and has no calls yet). */
  begin(): void {
    this.text = "";
    this.tools.clear();
  }

  handle(update: Json): CliEvent[] {
    switch (update?.sessionUpdate) {
      case "agent_message_chunk": {
        const text = chunkText(update.content);
        if (!text) return [];
        this.text += text;
        return [event.delta(text)];
      }
      case "tool_call":
      case "tool_call_update":
        return this.tool(update);
      default:
        return [];
    }
  }

  /** The tool call a permission request is about, logged first so the log reads call, then permission. */
  toolFor(toolCall: Json): { events: CliEvent[]; use: ToolUseInfo } {
    const id = String(toolCall?.toolCallId ?? "");
    const events = this.closeText();
    this.track(toolCall);
    const state = this.tools.get(id)!;
    if (!state.logged) {
      state.logged = true;
      events.push(event.toolCall(id, state.name, state.input));
    }
    const title = typeof toolCall?.title === "string" ? { title: toolCall.title } : {};
    return { events, use: { id, name: state.name, arguments: state.input, ...title } };
  }

  /** The agent's turn ended: the open text as the last message, and calls that never reported an end. */
  end(stopReason: string | undefined, response: Json): CliEvent[] {
    const events: CliEvent[] = [];
    for (const [id, state] of this.tools) {
      if (!state.logged) events.push(event.toolCall(id, state.name, state.input));
      if (!state.done) events.push(event.toolResult(id, `the agent's turn ended (${stopReason})`, true));
    }
    this.tools.clear();
    const usage = responseUsage(response);
    if (this.text !== "" || usage) {
      const reason = stopReason && stopReason !== "end_turn" ? stopReason : undefined;
      events.push(event.message(this.text, usage, reason));
    }
    this.text = "";
    return events;
  }

  private tool(update: Json): CliEvent[] {
    const id = String(update.toolCallId ?? "");
    if (!id) return [event.warning(`a ${update.sessionUpdate} without a toolCallId`)];
    const events = this.closeText();
    this.track(update);
    const state = this.tools.get(id)!;
    const status = update.status;
    if (!state.logged && (status === "in_progress" || status === "completed" || status === "failed")) {
      state.logged = true;
      events.push(event.toolCall(id, state.name, state.input));
    }
    if ((status === "completed" || status === "failed") && !state.done) {
      state.done = true;
      events.push(event.toolResult(id, resultText(update), status === "failed"));
    }
    return events;
  }

  /** Records what an update says about a call: its name once known, its input once not empty. */
  private track(update: Json): void {
    const id = String(update?.toolCallId ?? "");
    let state = this.tools.get(id);
    if (!state) {
      state = { name: this.toolName(update), input: {}, logged: false, done: false };
      this.tools.set(id, state);
    } else if (!state.logged) {
      const better = this.toolName(update, "");
      if (better && (better !== update?.kind || state.name === "tool")) state.name = better;
    }
    const input = update?.rawInput ?? this.reader.toolArguments?.(update);
    if (!state.logged && input !== undefined && input !== null) {
      const record = asRecord(input);
      if (Object.keys(record).length > 0 || Object.keys(state.input).length === 0) state.input = record;
    }
  }

  /**
   * A tool's name: the agent's own where it gives one, else the ACP kind (`execute`, `edit`, …), which is what
   * a permission policy can name for agents that give nothing better.
   */
  private toolName(update: Json, fallback = "tool"): string {
    const own = agentToolName(update) ?? this.reader.toolName?.(update);
    if (own) return own;
    return typeof update?.kind === "string" && update.kind !== "" ? update.kind : fallback;
  }

  private closeText(): CliEvent[] {
    if (this.text === "") return [];
    const text = this.text;
    this.text = "";
    return [event.message(text)];
  }
}

/** The agent's own name for a tool where it says one (claude-agent-acp's `_meta.claudeCode.toolName`). */
function agentToolName(update: Json): string | undefined {
  const meta = update?._meta;
  const named = meta?.claudeCode?.toolName ?? meta?.toolName ?? update?.name;
  return typeof named === "string" && named !== "" ? named : undefined;
}

function chunkText(content: Json): string {
  if (content?.type === "text" && typeof content.text === "string") return content.text;
  return "";
}

/**
 * A tool result's text: the tool's own output where the agent passes it as text (claude-agent-acp's content
 * wraps it in markdown for display), else the content blocks (text, diffs, terminals by id), else the raw output.
 */
function resultText(update: Json): string {
  const raw = plainOutput(update.rawOutput);
  if (raw !== undefined) return raw;
  const parts: string[] = [];
  for (const item of Array.isArray(update.content) ? update.content : []) {
    if (item?.type === "content") {
      const block = item.content;
      if (block?.type === "text" && typeof block.text === "string") parts.push(block.text);
      else if (block?.type === "resource" && typeof block.resource?.text === "string")
        parts.push(block.resource.text);
      else if (block?.type) parts.push(`[${block.type}]`);
    } else if (item?.type === "diff") parts.push(`[diff of ${item.path}]`);
    else if (item?.type === "terminal") parts.push(`[terminal ${item.terminalId}]`);
  }
  if (parts.length > 0) return parts.join("\n");
  return rawText(update.rawOutput);
}

/** Raw output that is plainly the tool's text: a string, or an object with the output in a known field. */
function plainOutput(raw: Json): string | undefined {
  if (typeof raw === "string") return raw;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  for (const key of ["formatted_output", "aggregated_output", "output", "stdout"]) {
    if (typeof raw[key] === "string") return raw[key];
  }
  return undefined;
}

function rawText(raw: Json): string {
  if (raw === undefined || raw === null) return "";
  if (typeof raw === "string") return raw;
  if (Array.isArray(raw)) {
    return raw
      .map((part) =>
        part?.type === "text" && typeof part.text === "string" ? part.text : JSON.stringify(part),
      )
      .join("\n");
  }
  return plainOutput(raw) ?? JSON.stringify(raw);
}

/** `session/prompt`'s usage (unstable in ACP v1, sent by claude-agent-acp): tokens of the whole turn. */
export function responseUsage(response: Json): Usage | undefined {
  const usage = response?.usage;
  if (!usage) return undefined;
  return usageOf({
    input: usage.inputTokens,
    output: usage.outputTokens,
    cacheRead: usage.cachedReadTokens,
    cacheWrite: usage.cachedWriteTokens,
  });
}
