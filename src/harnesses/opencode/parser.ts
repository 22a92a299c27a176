// opencode's `/event` stream (one JSON object per SSE `data:`) mapped to Brain for one session: text deltas from
// `message.part.delta` on assistant text parts (reasoning is left out), tool calls and results from tool parts
// (opencode's tool names: bash, edit, read, …), one `assistant.message` per assistant message when it completes
// (tokens and cost), permission requests and questions (`question.asked`: opencode's `question` tool), and the end
// of the prompt at `session.idle`. A subagent (the `task` tool) runs in a child session, whose requests block the
// turn as much as the session's own: they are passed on, the rest of its events is left out, like those of other
// sessions. Event and part types it does not know are skipped, each said once (see UnknownTypes).
import { asRecord, type CliEvent, type CliTurnEnd, event, usageOf } from "../cli/events.js";
import { UnknownTypes } from "../cli/unknown-types.js";

// biome-ignore lint/suspicious/noExplicitAny: third-party events, decoded leniently
type Json = any;

export type OpencodeSignal =
  | { kind: "event"; event: CliEvent }
  | {
      kind: "permission";
      id: string;
      tool: string;
      arguments: Record<string, unknown>;
      /** Set when a subagent asks: its session, named for the client. */
      subagent?: string;
      /** The session's own tool part the request is for (its tool.callID): its tool.call's id. */
      callId?: string;
    }
  | { kind: "question"; id: string; questions: OpencodeQuestion[] }
  | { kind: "end"; end: CliTurnEnd }
  /** The first event (or message part) of a type this mapper does not know (a newer opencode's). */
  | { kind: "unknown"; type: string; part?: true };

/** The `/event` types opencode 1.18.33 defines that Brain has no use for (its experimental session.next.* aside). */
const SKIPPED_EVENTS = new Set([
  ...["server.connected", "server.heartbeat", "server.instance.disposed", "global.disposed"],
  ...["session.created", "session.updated", "session.deleted", "session.status", "session.diff"],
  ...["session.compacted", "message.removed", "message.part.removed", "permission.replied"],
  ...["question.replied", "question.rejected", "permission.v2.asked", "permission.v2.replied"],
  ...["question.v2.asked", "question.v2.replied", "question.v2.rejected", "todo.updated", "command.executed"],
  ...["file.edited", "file.watcher.updated", "lsp.updated", "mcp.tools.changed", "mcp.browser.open.failed"],
  ...["installation.updated", "installation.update-available", "plugin.added", "catalog.updated"],
  ...["integration.updated", "integration.connection.updated", "reference.updated", "project.updated"],
  ...["project.directories.updated", "pty.created", "pty.updated", "pty.exited", "pty.deleted"],
  ...["vcs.branch.updated", "workspace.ready", "workspace.failed", "workspace.status", "worktree.ready"],
  ...["worktree.failed", "tui.prompt.append", "tui.command.execute", "tui.toast.show", "tui.session.select"],
]);
/** The message part types opencode 1.18.33 has besides text and tool, which Brain reads. */
const SKIPPED_PARTS = new Set([
  ...["reasoning", "file", "step-start", "step-finish", "snapshot", "patch", "agent", "subtask", "retry"],
  "compaction",
]);

/** One question of a `question.asked` (opencode's QuestionInfo). */
export interface OpencodeQuestion {
  question: string;
  header?: string;
  options: { label: string; description?: string }[];
  multiple?: boolean;
}

interface Part {
  type: string;
  messageID: string;
  /** Text already sent as deltas. */
  streamed: string;
}

interface Message {
  role: string;
  /** Text part ids, in order. */
  parts: string[];
  emitted: boolean;
}

export class OpencodeEventMapper {
  private readonly parts = new Map<string, Part>();
  private readonly messages = new Map<string, Message>();
  private readonly called = new Set<string>();
  /** Tool name by call id, for calls opencode has announced but not yet started. */
  private readonly pendingTools = new Map<string, string>();
  private readonly finished = new Set<string>();
  /** Messages already sent: opencode repeats `message.updated`, and sends a last one after an abort's idle. */
  private readonly emitted = new Set<string>();
  private error: { name: string; message: string } | undefined;
  /** Sessions of the subagents this session started, and theirs in turn. */
  private readonly children = new Set<string>();
  private readonly unknownEvents = new UnknownTypes(SKIPPED_EVENTS);
  private readonly unknownParts = new UnknownTypes(SKIPPED_PARTS);

  constructor(public sessionId: string | undefined = undefined) {}

  handle(ev: Json): OpencodeSignal[] {
    const props = ev?.properties ?? {};
    const session = props.sessionID ?? props.info?.sessionID ?? props.part?.sessionID;
    if (ev?.type === "session.created" || ev?.type === "session.updated") this.adopt(props.info);
    if (this.sessionId && session !== undefined && session !== this.sessionId) {
      if (!this.children.has(session)) return [];
      if (ev?.type === "permission.asked") return [this.permission(props, session)];
      if (ev?.type === "question.asked") return [this.question(props)];
      return [];
    }
    switch (ev?.type) {
      case "message.updated":
        return this.onMessage(props.info);
      case "message.part.updated":
        return this.onPart(props.part);
      case "message.part.delta":
        return this.onDelta(props);
      case "permission.asked":
        return [...this.announceBeforeAsking(props, props.metadata ?? {}), this.permission(props)];
      case "question.asked":
        return [...this.announceBeforeAsking(props, { questions: props.questions }), this.question(props)];
      case "session.error": {
        const error = props.error ?? {};
        this.error = {
          name: String(error.name ?? "Error"),
          message: String(error.data?.message ?? error.message ?? error.name),
        };
        return [];
      }
      case "session.idle":
        return this.onIdle();
      default: {
        const type = this.unknownEvents.first(ev?.type);
        return type === undefined ? [] : [{ kind: "unknown", type }];
      }
    }
  }

  /** A session whose parent is this one or one of its subagents' is a subagent's too. */
  private adopt(info: Json): void {
    const parent = info?.parentID;
    if (typeof info?.id !== "string" || typeof parent !== "string") return;
    if (parent === this.sessionId || this.children.has(parent)) this.children.add(info.id);
  }

  private permission(props: Json, subagent?: string): OpencodeSignal {
    return {
      kind: "permission",
      id: String(props.id),
      tool: String(props.permission ?? "unknown"),
      arguments: asRecord({
        patterns: props.patterns,
        ...(props.metadata ? { metadata: props.metadata } : {}),
      }),
      ...(subagent ? { subagent } : {}),
      // A subagent's calls are not the session's, so they are not logged: its request names none of them.
      ...(!subagent && typeof props.tool?.callID === "string" ? { callId: props.tool.callID } : {}),
    };
  }

  private question(props: Json): OpencodeSignal {
    const questions = (Array.isArray(props.questions) ? props.questions : []).map(
      (q: Json): OpencodeQuestion => ({
        question: String(q?.question ?? ""),
        ...(typeof q?.header === "string" && q.header ? { header: q.header } : {}),
        options: (Array.isArray(q?.options) ? q.options : []).map((o: Json) => ({
          label: String(o?.label ?? ""),
          ...(typeof o?.description === "string" ? { description: o.description } : {}),
        })),
        ...(q?.multiple === true ? { multiple: true } : {}),
      }),
    );
    return { kind: "question", id: String(props.id), questions };
  }

  private message(id: string): Message {
    let message = this.messages.get(id);
    if (!message) {
      message = { role: "", parts: [], emitted: false };
      this.messages.set(id, message);
    }
    return message;
  }

  private onMessage(info: Json): OpencodeSignal[] {
    if (!info?.id || this.emitted.has(String(info.id))) return [];
    const message = this.message(String(info.id));
    message.role = String(info.role ?? message.role);
    if (message.role !== "assistant" || message.emitted || !info.time?.completed) return [];
    this.emitted.add(String(info.id));
    return [this.emitMessage(message, info)];
  }

  private emitMessage(message: Message, info: Json, stopReason?: string): OpencodeSignal {
    message.emitted = true;
    const text = message.parts.map((id) => this.parts.get(id)?.streamed ?? "").join("");
    const tokens = info?.tokens ?? {};
    const usage = usageOf({
      input: tokens.input,
      output: tokens.output,
      cacheRead: tokens.cache?.read,
      cacheWrite: tokens.cache?.write,
      cost: info?.cost,
    });
    const stop = stopReason ?? (typeof info?.finish === "string" ? info.finish : undefined);
    return { kind: "event", event: event.message(text, usage, stop) };
  }

  private onPart(part: Json): OpencodeSignal[] {
    if (!part?.id) return [];
    const id = String(part.id);
    const messageID = String(part.messageID ?? "");
    let known = this.parts.get(id);
    if (!known) {
      known = { type: String(part.type), messageID, streamed: "" };
      this.parts.set(id, known);
      if (part.type === "text") this.message(messageID).parts.push(id);
    }
    if (part.type === "text") {
      // A text part that arrives whole (or ahead of its deltas) is sent as the delta it still owes.
      const text = typeof part.text === "string" ? part.text : "";
      if (this.message(messageID).role !== "assistant" || !text.startsWith(known.streamed)) return [];
      const rest = text.slice(known.streamed.length);
      known.streamed = text;
      return rest ? [{ kind: "event", event: event.delta(rest) }] : [];
    }
    if (part.type === "tool") return this.onTool(part);
    const type = this.unknownParts.first(part.type);
    return type === undefined ? [] : [{ kind: "unknown", type, part: true }];
  }

  private onTool(part: Json): OpencodeSignal[] {
    const callId = String(part.callID ?? part.id);
    const state = part.state ?? {};
    const input = state.input ?? {};
    const out: OpencodeSignal[] = [];
    if (state.status === "pending") this.pendingTools.set(callId, String(part.tool));
    const ready = state.status !== "pending" || Object.keys(input).length > 0;
    if (ready && !this.called.has(callId)) {
      this.called.add(callId);
      out.push({ kind: "event", event: event.toolCall(callId, String(part.tool), input) });
    }
    if ((state.status === "completed" || state.status === "error") && !this.finished.has(callId)) {
      this.finished.add(callId);
      const isError = state.status === "error";
      const text = isError ? String(state.error ?? "the tool failed") : String(state.output ?? "");
      out.push({ kind: "event", event: event.toolResult(callId, text, isError) });
    }
    return out;
  }

  /**
   * A tool part is still "pending" with no input when opencode asks for permission or a question; announce the
   * call now, with what the request shows of it, so the log has the call before the request about it.
   */
  private announceBeforeAsking(props: Json, input: Record<string, unknown>): OpencodeSignal[] {
    const callId = props.tool?.callID;
    const tool = typeof callId === "string" ? this.pendingTools.get(callId) : undefined;
    if (!tool || this.called.has(callId)) return [];
    this.called.add(callId);
    return [{ kind: "event", event: event.toolCall(callId, tool, input) }];
  }

  private onDelta(props: Json): OpencodeSignal[] {
    if (props.field !== "text" || typeof props.delta !== "string" || props.delta === "") return [];
    const id = String(props.partID ?? "");
    let part = this.parts.get(id);
    if (!part) {
      part = { type: "text", messageID: String(props.messageID ?? ""), streamed: "" };
      this.parts.set(id, part);
      this.message(part.messageID).parts.push(id);
    }
    if (part.type !== "text" || this.message(part.messageID).role !== "assistant") return [];
    part.streamed += props.delta;
    return [{ kind: "event", event: event.delta(props.delta) }];
  }

  /** The prompt is over: unfinished assistant messages (an abort cut them short) go out as they are. */
  private onIdle(): OpencodeSignal[] {
    const out: OpencodeSignal[] = [];
    for (const [id, message] of this.messages) {
      if (message.role !== "assistant" || message.emitted) continue;
      this.emitted.add(id);
      out.push(this.emitMessage(message, {}, "aborted"));
    }
    // What the turn streamed is settled now; only the ids are kept, to ignore late repeats.
    this.messages.clear();
    this.parts.clear();
    this.pendingTools.clear();
    const error = this.error;
    this.error = undefined;
    let end: CliTurnEnd = { outcome: "completed" };
    if (error?.name === "MessageAbortedError") end = { outcome: "aborted" };
    else if (error)
      end = {
        outcome: "failed",
        code: "provider_error",
        message: `opencode: ${error.name}: ${error.message}`,
      };
    out.push({ kind: "end", end });
    return out;
  }
}
