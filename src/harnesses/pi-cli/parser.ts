// pi's RPC mode output (`pi --mode rpc`) mapped to Brain: text deltas from `message_update`, one
// `assistant.message` per assistant `message_end` (text, usage with cost, stop reason), tool calls and results
// from `tool_execution_start`/`_end` (pi's own tool names: bash, read, edit, write, …), command responses, the
// extension dialogs that need an answer, and the end of a prompt at `agent_end`. Unknown types are skipped, each
// said once: a newer pi that renamed an event Brain reads would otherwise look like a turn that went quiet.
// A prompt whose model call failed is not over at its `agent_end`: pi may run it again (its auto-retry after a 429,
// a 5xx or a lost connection; a compaction after a context overflow), and says so right after, in the same breath.
// Such an end is held and a `get_state` sent: pi answers it only after it has said whether it retries.
import { type CliEvent, type CliTurnEnd, contentText, event, usageOf } from "../cli/events.js";
import { UnknownTypes } from "../cli/unknown-types.js";

// biome-ignore lint/suspicious/noExplicitAny: third-party output, decoded leniently
type Json = any;

export type PiSignal =
  | { kind: "event"; event: CliEvent }
  | { kind: "response"; id?: string; command: string; success: boolean; error?: string; data?: Json }
  | {
      kind: "dialog";
      id: string;
      method: "select" | "confirm" | "input" | "editor";
      question: string;
      options?: string[];
    }
  | { kind: "end"; end: CliTurnEnd }
  /** pi's own steering queue, as it now stands: what pi took but has not run yet. */
  | { kind: "queue"; steering: string[] }
  /** A command to write to pi (the probe that decides a held end). */
  | { kind: "send"; command: { id: string; type: string } }
  /** The first event of a type this parser does not know (a newer pi's). */
  | { kind: "unknown"; type: string };

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);
/** What pi 0.73 writes that Brain has no use for (its RpcMode output and AgentSessionEvent types). */
const SKIPPED = new Set([
  "turn_start",
  "turn_end",
  "message_start",
  "tool_execution_update",
  "session_info_changed",
  "thinking_level_changed",
  "extension_error",
]);

export class PiEventParser {
  /** How the prompt's last assistant message stopped: decides how `agent_end` ends the turn. */
  private lastStop: { reason?: string; error?: string } = {};
  /** A failed prompt's end, held until pi has said whether it runs the prompt again. */
  private heldEnd: CliTurnEnd | undefined;
  /** The id of the probe whose answer releases `heldEnd`. */
  private probe: string | undefined;
  private probes = 0;
  /** A compaction is running: one after a context overflow may run the prompt again when it ends. */
  private compacting = false;
  /** Said once per pi process (the parser is one pi's). */
  private readonly unknown = new UnknownTypes(SKIPPED);

  handle(line: Json): PiSignal[] {
    if (line === null || typeof line !== "object") return [];
    switch (line.type) {
      case "agent_start":
        this.lastStop = {};
        return [];
      case "message_update": {
        // Read from the line's head (./updates.ts): the event's type, and a text delta's delta and contentIndex.
        const ev = line.assistantMessageEvent;
        return ev?.type === "text_delta" && typeof ev.delta === "string" && ev.delta !== ""
          ? [{ kind: "event", event: event.delta(ev.delta) }]
          : [];
      }
      case "message_end":
        return this.onMessageEnd(line.message);
      case "tool_execution_start":
        return [
          { kind: "event", event: event.toolCall(String(line.toolCallId), String(line.toolName), line.args) },
        ];
      case "tool_execution_end":
        return [
          {
            kind: "event",
            event: event.toolResult(
              String(line.toolCallId),
              contentText(line.result?.content),
              line.isError === true,
            ),
          },
        ];
      case "agent_end": {
        const end = this.endOfPrompt();
        return end.outcome === "failed" ? this.hold(end) : [{ kind: "end", end }];
      }
      case "auto_retry_start":
        this.heldEnd = undefined;
        return [
          {
            kind: "event",
            event: event.warning(
              `pi-cli: the model call failed (${String(line.errorMessage ?? "no reason given")}); pi tries it again (attempt ${line.attempt} of ${line.maxAttempts})`,
            ),
          },
        ];
      case "auto_retry_end":
        // Given up (the last attempt's agent_end is held already) or cancelled by an abort (no agent_end follows).
        if (line.success === true || this.heldEnd) return [];
        return this.hold(failed(String(line.finalError ?? "the model call failed")));
      case "compaction_start":
        this.compacting = true;
        return [];
      case "compaction_end":
        this.compacting = false;
        if (line.willRetry === true) this.heldEnd = undefined;
        return this.release();
      case "response":
        return [
          ...(typeof line.id === "string" && line.id === this.probe ? this.release() : []),
          {
            kind: "response",
            ...(typeof line.id === "string" ? { id: line.id } : {}),
            command: String(line.command ?? ""),
            success: line.success === true,
            ...(typeof line.error === "string" ? { error: line.error } : {}),
            ...(line.data !== undefined ? { data: line.data } : {}),
          },
        ];
      case "queue_update":
        return Array.isArray(line.steering) ? [{ kind: "queue", steering: line.steering.map(String) }] : [];
      case "extension_ui_request":
        if (!DIALOGS.has(line.method)) return [];
        return [
          {
            kind: "dialog",
            id: String(line.id),
            method: line.method,
            question: [line.title, line.message].filter((s) => typeof s === "string" && s !== "").join(": "),
            ...(Array.isArray(line.options) ? { options: line.options.map(String) } : {}),
            ...(line.method === "confirm" ? { options: ["yes", "no"] } : {}),
          },
        ];
      default:
        return this.onUnknown(line.type);
    }
  }

  private onUnknown(type: unknown): PiSignal[] {
    const name = this.unknown.first(type);
    return name === undefined ? [] : [{ kind: "unknown", type: name }];
  }

  private onMessageEnd(message: Json): PiSignal[] {
    if (message?.role !== "assistant") return [];
    const text = (Array.isArray(message.content) ? message.content : [])
      .filter((part: Json) => part?.type === "text" && typeof part.text === "string")
      .map((part: Json) => part.text)
      .join("");
    const u = message.usage ?? {};
    const usage = usageOf({
      input: u.input,
      output: u.output,
      cacheRead: u.cacheRead,
      cacheWrite: u.cacheWrite,
      cost: u.cost?.total,
    });
    const reason = typeof message.stopReason === "string" ? message.stopReason : undefined;
    this.lastStop = {
      ...(reason ? { reason } : {}),
      ...(typeof message.errorMessage === "string" ? { error: message.errorMessage } : {}),
    };
    return [{ kind: "event", event: event.message(text, usage, reason) }];
  }

  private endOfPrompt(): CliTurnEnd {
    const { reason, error } = this.lastStop;
    this.lastStop = {};
    if (reason === "aborted") return { outcome: "aborted" };
    if (reason === "error") return failed(error ?? "the model request failed");
    return { outcome: "completed" };
  }

  private hold(end: CliTurnEnd): PiSignal[] {
    this.heldEnd = end;
    this.probe = `settle-${++this.probes}`;
    return [{ kind: "send", command: { id: this.probe, type: "get_state" } }];
  }

  /** The held end, once pi has answered the probe and runs no compaction that may retry. */
  private release(): PiSignal[] {
    const end = this.heldEnd;
    if (!end || this.compacting) return [];
    this.heldEnd = undefined;
    this.probe = undefined;
    return [{ kind: "end", end }];
  }
}

function failed(error: string): CliTurnEnd {
  return { outcome: "failed", code: "provider_error", message: `pi-cli: ${error}` };
}
