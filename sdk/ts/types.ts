// What a runner author implements (Runner, Attachment) and what the SDK hands them (Turn). Wire types come
// from src/protocol, the one source; nothing here redefines a frame.
import type { MessageData, NativeFile, OpenParams, ToolResult } from "../../src/protocol/runner.js";

/** The runner: one `open` per attachment (a native session in this process). */
export interface Runner {
  /**
   * Opens `params.dir` passively: load saved state, and make no model call, tool call or timer until the first
   * prompt. Throw (RunnerFailure for a chosen code) to refuse the open.
   */
  open(params: OpenParams, info: AttachmentInfo): Promise<Attachment> | Attachment;
}

export interface AttachmentInfo {
  /** Brain's id for this attachment; every frame about it carries it. */
  id: string;
}

/** The handlers of one open attachment. Brain sends at most one prompt at a time per attachment. */
export interface Attachment {
  /** Sent as the `open` result: diagnostic metadata such as `{ tools: [...] }`. Defaults to `{}`. */
  readonly metadata?: Record<string, unknown>;
  /**
   * Runs one turn to its end, including every tool call and follow-up generation. Resolve when it settles;
   * `interrupted` defaults to whether the turn was interrupted. Throwing fails the turn (see RunnerFailure);
   * throwing after an interrupt (say a TurnInterrupted from callTool) settles it as interrupted.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing is the common case
  prompt(text: string, turn: Turn): Promise<PromptResult | void>;
  /**
   * Steering text for the running turn. Without this handler the SDK queues the text on the turn, where the
   * prompt handler finds it with `turn.takeSteering()`.
   */
  steer?(text: string, turn: Turn): Promise<void> | void;
  /** Called after `turn.signal` has been aborted, for runners that need more than the signal. */
  interrupt?(turn: Turn): Promise<void> | void;
  /** Lists the native files (relative to the dir) that restore the conversation, with exact sizes. */
  checkpoint(): Promise<NativeFile[]> | NativeFile[];
  /** Releases the attachment (its turn, if any, has been aborted first). */
  detach?(): Promise<void> | void;
}

export interface PromptResult {
  interrupted?: boolean;
}

export interface ToolCallOptions {
  /** The tool call's id as the model named it; a fresh one by default. */
  id?: string;
}

/** One running turn: its identity, its abort signal, its events and tool calls. */
export interface Turn {
  readonly id: string;
  readonly attachment: string;
  /** Aborted when Brain interrupts the turn or detaches the attachment, or when stdin ends. */
  readonly signal: AbortSignal;
  /** False once the prompt has been answered or the attachment detached: events and tool calls are refused then. */
  readonly active: boolean;
  /**
   * Streams assistant text (`assistant.delta`). Very long text is split so no frame passes 4 MiB. The frame is
   * queued at once; the promise settles when the output has room again, so a handler that produces faster than
   * Brain reads can `await` it and hold no more than the stream's buffer.
   */
  delta(text: string): Promise<void>;
  /** Reports a finished assistant message (`assistant.message`): text, usage, stop reason. Awaitable as delta. */
  message(data: MessageData): Promise<void>;
  /**
   * Asks Brain to run a bound tool (reverse `tool.call`) and resolves with its result. A tool's own failure is
   * a result with `is_error: true`. Rejects with TurnInterrupted once the turn is interrupted.
   */
  callTool(name: string, args: Record<string, unknown>, options?: ToolCallOptions): Promise<ToolResult>;
  /** Steering texts queued for this turn and not yet taken (only when the attachment has no `steer`). */
  takeSteering(): string[];
}
