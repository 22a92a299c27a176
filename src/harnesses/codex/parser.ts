// Codex app-server notifications mapped to Brain: agent message deltas, one `assistant.message` per agent message
// (with the usage of the model call that produced it), tool calls and results for the CLI's own tools by the
// names the model sees (`exec_command`, `apply_patch`, `mcp__<server>__<tool>`, …), and the turn's end.
// Notifications for other threads (sub-agents) and the rest of the protocol's are skipped; a method the protocol
// does not have (a newer Codex's) is skipped too, and said once as a warning (see UnknownTypes).

import { type CliEvent, type CliTurnEnd, contentText, event, usageOf } from "../cli/events.js";
import { UnknownTypes, unknownTypeWarning } from "../cli/unknown-types.js";
import type { ServerNotification } from "./generated/ServerNotification.js";
import type { ThreadItem } from "./generated/v2/ThreadItem.js";
import type { TokenUsageBreakdown } from "./generated/v2/TokenUsageBreakdown.js";
import { SKIPPED_METHODS } from "./skipped-methods.js";

// biome-ignore lint/suspicious/noExplicitAny: third-party messages, decoded leniently
type Json = any;

export type CodexSignal =
  | { kind: "event"; event: CliEvent }
  | { kind: "turn-started"; turnId: string }
  | { kind: "end"; turnId: string; end: CliTurnEnd }
  /** Codex's own warning to its user (a config problem at start, a model it knows nothing of): said in or out of a turn. */
  | { kind: "warning"; message: string };

/** Methods this mapper reads; the rest of ServerNotification["method"] is skipped. */
export type Handled = Extract<
  ServerNotification["method"],
  | "turn/started"
  | "turn/completed"
  | "item/started"
  | "item/completed"
  | "item/agentMessage/delta"
  | "thread/tokenUsage/updated"
  | "error"
  | "warning"
  | "configWarning"
>;

/** The model-facing name of the tool behind an item, and its arguments; undefined for non-tool items. */
export function toolOf(item: ThreadItem | Json): { name: string; args: Record<string, unknown> } | undefined {
  switch (item?.type) {
    case "commandExecution":
      return { name: "exec_command", args: { command: item.command, cwd: item.cwd } };
    case "fileChange":
      return { name: "apply_patch", args: { changes: item.changes } };
    case "mcpToolCall":
      return { name: `mcp__${item.server}__${item.tool}`, args: { arguments: item.arguments } };
    case "dynamicToolCall":
      return { name: String(item.tool), args: { arguments: item.arguments } };
    case "webSearch":
      return { name: "web_search", args: { query: item.query } };
    case "imageView":
      return { name: "view_image", args: { path: item.path } };
    default:
      return undefined;
  }
}

/** What a finished tool item returned, and whether it failed (declined counts as failed). */
export function resultOf(item: Json): { text: string; isError: boolean } {
  switch (item?.type) {
    case "commandExecution": {
      const text = item.aggregatedOutput ?? (item.status === "declined" ? "the command was declined" : "");
      return { text, isError: item.status !== "completed" || (item.exitCode ?? 0) !== 0 };
    }
    case "fileChange": {
      const paths = (item.changes ?? []).map((c: Json) => `${c.kind?.type ?? c.kind} ${c.path}`).join("\n");
      return { text: `${item.status}${paths ? `\n${paths}` : ""}`, isError: item.status !== "completed" };
    }
    case "mcpToolCall":
      return item.error
        ? { text: String(item.error.message), isError: true }
        : { text: contentText(item.result?.content), isError: false };
    case "dynamicToolCall":
      return { text: contentText(item.contentItems), isError: item.success === false };
    default:
      return { text: item?.status ? String(item.status) : "", isError: item?.status === "failed" };
  }
}

function usageOfBreakdown(b: TokenUsageBreakdown | undefined) {
  if (!b) return undefined;
  return usageOf({
    input: b.inputTokens,
    output: b.outputTokens,
    cacheRead: b.cachedInputTokens,
    cacheWrite: b.cacheWriteInputTokens,
  });
}

export class CodexNotificationMapper {
  /** Only this thread's notifications are the session's conversation. */
  threadId: string | undefined;
  private held: { text: string } | undefined;
  /** Text streamed for agent messages not yet completed: what is left of them when a turn is interrupted. */
  private partial = new Map<string, string>();
  private failure: string | undefined;
  private readonly unknown = new UnknownTypes(SKIPPED_METHODS);

  handle(method: string, params: Json): CodexSignal[] {
    if (this.threadId && typeof params?.threadId === "string" && params.threadId !== this.threadId) return [];
    switch (method as Handled) {
      case "turn/started":
        this.failure = undefined;
        return [{ kind: "turn-started", turnId: String(params?.turn?.id ?? "") }];
      case "item/agentMessage/delta": {
        if (typeof params?.delta !== "string" || params.delta === "") return [];
        const id = String(params.itemId ?? "");
        this.partial.set(id, (this.partial.get(id) ?? "") + params.delta);
        return [{ kind: "event", event: event.delta(params.delta) }];
      }
      case "item/started": {
        const tool = toolOf(params?.item);
        return tool
          ? [{ kind: "event", event: event.toolCall(String(params.item.id), tool.name, tool.args) }]
          : [];
      }
      case "item/completed":
        return this.onItemCompleted(params?.item);
      case "thread/tokenUsage/updated": {
        const held = this.held;
        this.held = undefined;
        if (!held) return [];
        return [
          { kind: "event", event: event.message(held.text, usageOfBreakdown(params?.tokenUsage?.last)) },
        ];
      }
      case "error":
        if (params?.willRetry !== true) this.failure = String(params?.error?.message ?? "the turn failed");
        return [];
      case "turn/completed":
        return this.onTurnCompleted(params?.turn);
      case "warning":
        return typeof params?.message === "string" ? [{ kind: "warning", message: params.message }] : [];
      case "configWarning":
        return typeof params?.summary === "string"
          ? [{ kind: "warning", message: configWarning(params) }]
          : [];
      default: {
        const name = this.unknown.first(method);
        return name === undefined
          ? []
          : [{ kind: "warning", message: unknownTypeWarning("codex", name, "a notification") }];
      }
    }
  }

  private onItemCompleted(item: Json): CodexSignal[] {
    if (item?.type === "agentMessage") {
      this.partial.delete(String(item.id));
      const out = this.flush();
      this.held = { text: String(item.text ?? "") };
      return out;
    }
    if (!toolOf(item)) return [];
    const { text, isError } = resultOf(item);
    return [{ kind: "event", event: event.toolResult(String(item.id), text, isError) }];
  }

  private onTurnCompleted(turn: Json): CodexSignal[] {
    const out = this.flush();
    for (const text of this.partial.values())
      out.push({ kind: "event", event: event.message(text, undefined, "aborted") });
    this.partial.clear();
    const turnId = String(turn?.id ?? "");
    let end: CliTurnEnd;
    if (turn?.status === "completed") end = { outcome: "completed" };
    else if (turn?.status === "interrupted") end = { outcome: "aborted" };
    else {
      const message = turn?.error?.message ?? this.failure ?? `the turn ended as "${turn?.status}"`;
      end = { outcome: "failed", code: "provider_error", message: `codex: ${message}` };
    }
    this.failure = undefined;
    out.push({ kind: "end", turnId, end });
    return out;
  }

  private flush(): CodexSignal[] {
    const held = this.held;
    this.held = undefined;
    return held ? [{ kind: "event", event: event.message(held.text) }] : [];
  }
}

/** A config warning with what Codex adds to it: guidance, and the file and line it is about. */
function configWarning(params: Json): string {
  const where = typeof params.path === "string" ? ` (${params.path}${lineOf(params.range)})` : "";
  const details = typeof params.details === "string" && params.details ? `: ${params.details}` : "";
  return `${params.summary}${details}${where}`;
}

function lineOf(range: Json): string {
  const line = range?.start?.line;
  return typeof line === "number" ? `:${line}` : "";
}
