// One run of a nui agent, translated into Brain's events as it streams: text → assistant.delta (and one
// assistant.message with the whole text at the end), the agent's own tool calls and results → tool.call and
// tool.result, images → image. It remembers what the end of the run needs: the error the agent reported and
// the sessionId of its `done` event.
import { HarnessError, type HarnessOptions } from "../../core/harness.js";
import { clip } from "../../protocol/jsonrpc.js";
import type { NuiHarnessEvent } from "../../protocol/nui/harness-event.js";
import { TextBytes } from "../../protocol/text-bytes.js";
import { WarningLimit } from "../warning-limit.js";

/** How much of a warning is logged: what it quotes of a host's event (a type, an id) can be megabytes. */
const MAX_WARNING_CHARS = 1000;

/** nui's protocols have no way to add to a running run: a steer to the harness `name` is refused, saying so. */
export function cannotSteer(name: string): HarnessError {
  return new HarnessError("brain_error", `${name} cannot be steered: nui's protocol has no steering`);
}

export class RunTranslator {
  private readonly text = new TextBytes();
  private readonly openCalls = new Set<string>();
  /**
   * A host can send a different bad event on every line: a few different warnings are logged per run, the rest
   * counted, and none held whole.
   */
  private readonly warnings: WarningLimit;
  /** What the agent's `error` event said (the last one wins). */
  error: string | undefined;
  /** The `sessionId` of the `done` event, for the next run. */
  sessionId: string | undefined;
  done = false;

  constructor(
    private readonly turn: string,
    private readonly options: Pick<HarnessOptions, "emit">,
    private readonly onHitl: (event: Extract<NuiHarnessEvent, { type: "hitl_request" }>) => void,
  ) {
    this.warnings = new WarningLimit((message) =>
      this.options.emit({ type: "harness.warning", turn: this.turn, data: { message } }),
    );
  }

  handle(event: NuiHarnessEvent): void {
    const turn = this.turn;
    switch (event.type) {
      case "text":
        if (!event.content) return;
        this.options.emit({ type: "assistant.delta", turn, data: this.text.add(event.content) });
        return;
      case "done":
        this.done = true;
        if (event.sessionId) this.sessionId = event.sessionId;
        return;
      case "error":
        this.error = event.error || "the agent reported an error without a message";
        return;
      case "tool_call":
        if (this.openCalls.has(event.toolCallId)) {
          return this.warn(
            `tool_call "${clip(event.toolCallId)}" repeated while the first is still open; ignored`,
          );
        }
        this.openCalls.add(event.toolCallId);
        this.options.emit({
          type: "tool.call",
          turn,
          data: { id: event.toolCallId, name: event.name, arguments: event.args },
        });
        return;
      case "tool_result":
        if (!this.openCalls.delete(event.toolCallId)) {
          return this.warn(
            `tool_result for "${clip(event.toolCallId)}", which no tool_call of this run opened; ignored`,
          );
        }
        this.options.emit({
          type: "tool.result",
          turn,
          data: {
            id: event.toolCallId,
            content: [{ type: "text", text: event.content }],
            is_error: event.isError,
          },
        });
        return;
      case "image":
        this.options.emit({ type: "image", turn, data: { mime_type: event.mimeType, data: event.data } });
        return;
      case "hitl_request":
        this.onHitl(event);
        return;
    }
  }

  /**
   * A text event's content as bytes [start, end) of `buf` (`view` is a DataView of it), read straight from the
   * host's stream: when they are plain (see copyPlain) this is handle() of that text event, and returns true; when
   * not, it does nothing and returns false (the caller decodes the event instead).
   */
  plainText(buf: Buffer, start: number, end: number, view: DataView): boolean {
    if (start === end) return true;
    const data = this.text.addPlain(buf, start, end, view);
    if (data === undefined) return false;
    this.options.emit({ type: "assistant.delta", turn: this.turn, data });
    return true;
  }

  /** Ends the run's output: the whole text as one assistant.message (when there was any). */
  finish(stopReason: string): void {
    if (!this.text.empty) {
      this.options.emit({
        type: "assistant.message",
        turn: this.turn,
        data: this.text.message(stopReason),
      });
    }
  }

  warn(message: string): void {
    this.warnings.warn(clip(message, MAX_WARNING_CHARS));
  }

  /** Logs how many warnings were held back; `who` names the harness. Called once the run is over, however it ended. */
  flushWarnings(who: string): void {
    this.warnings.flush(who);
  }
}
