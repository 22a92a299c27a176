// One running turn as the prompt handler sees it. Every frame it writes carries the attachment and the turn;
// once the prompt has been answered, the turn refuses to write anything more (Brain would only warn about it).
import { messageDataProblem } from "../../src/protocol/fast-brain-frames.js";
import type { MessageData, ToolResult } from "../../src/protocol/runner.js";
import { described, namedMessage, RunnerFailure, TurnInterrupted, thrownMessage } from "./errors.js";
import { catchLeaks, type LeakScope, withinScope } from "./leaks.js";
import type { Attachment, ToolCallOptions, Turn } from "./types.js";

/** What a turn needs from the host that owns it. */
export interface TurnHost {
  send(frame: unknown): void;
  /** Settles once the output has room again (at once when it has). */
  roomToWrite(): Promise<void>;
  log(message: string): void;
  /** Registers a reverse tool call's frame id; `settle` is called with the reply, or with an error. */
  awaitToolReply(frameId: string, turn: TurnState, settle: (result: ToolResult | Error) => void): void;
  /** Forgets a frame id whose reply no longer matters (a late reply is then dropped quietly). */
  abandonToolReply(frameId: string): void;
  nextFrameId(): string;
}

/** A delta's text is split below this many UTF-16 units: even fully escaped (6 bytes each) it stays < 4 MiB. */
export const MAX_DELTA_CHARS = 512 * 1024;

export class TurnState implements Turn, LeakScope {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly steering: string[] = [];
  private readonly waiting = new Map<string, (result: ToolResult | Error) => void>();
  private ended = false;
  /** @internal Why the turn fails whatever its handler returns (a message it could not send), if it must. */
  failure: RunnerFailure | undefined;
  /** Set once a promise left rejected and unhandled in the turn's async context has failed it (leaked). */
  private leakFailed = false;
  private failByLeak: (failure: RunnerFailure) => void = () => {};
  /** @internal Rejects with that failure; raced with the prompt handler, whose answer it then is. */
  readonly leakFailure = new Promise<never>((_resolve, reject) => {
    this.failByLeak = reject;
  });

  constructor(
    private readonly host: TurnHost,
    readonly attachment: string,
    readonly id: string,
  ) {
    this.signal = this.controller.signal;
    // Only a running prompt handler races it: a turn failed otherwise has nobody else to tell.
    this.leakFailure.catch(() => {});
  }

  get active(): boolean {
    return !this.ended;
  }

  delta(text: string): Promise<void> {
    if (!this.writable("assistant.delta")) return this.host.roomToWrite();
    for (const part of splitText(text, MAX_DELTA_CHARS)) {
      this.host.send({
        attachment: this.attachment,
        turn: this.id,
        event: "assistant.delta",
        data: { text: part },
      });
    }
    return this.host.roomToWrite();
  }

  message(data: MessageData): Promise<void> {
    if (!this.writable("assistant.message")) return this.host.roomToWrite();
    // Checked here so an invalid message fails the runner's own turn with a clear reason, instead of Brain
    // refusing the frame and killing the process.
    const problem = messageDataProblem(data);
    try {
      if (problem) throw new RunnerFailure("brain_error", `invalid assistant.message data: ${problem}`);
      this.host.send({ attachment: this.attachment, turn: this.id, event: "assistant.message", data });
    } catch (err) {
      return this.unsent(err);
    }
    return this.host.roomToWrite();
  }

  /**
   * A message that was not sent: rejected, as callTool's refusals are, never thrown at the call. The turn
   * fails with it too, whatever its handler returns: most handlers do not await their messages, and the
   * answer Brain never got must not settle as a completed turn. Marked handled, so a message nobody awaits
   * does not take the process (every attachment's turn) down as an unhandled rejection.
   */
  private unsent(err: unknown): Promise<void> {
    const failure =
      err instanceof RunnerFailure
        ? err
        : new RunnerFailure("brain_error", thrownMessage(err, "assistant.message"));
    this.failure ??= failure;
    const rejected = Promise.reject(failure);
    rejected.catch(() => {});
    return rejected;
  }

  callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions = {}): Promise<ToolResult> {
    if (this.ended) {
      return Promise.reject(new RunnerFailure("brain_error", `turn ${this.id} is over: no more tool calls`));
    }
    if (this.signal.aborted) return Promise.reject(new TurnInterrupted());
    // Brain refuses such a frame by killing the runner, every attachment's turn with it: only this call fails.
    const problem = toolCallProblem(name, args);
    if (problem) return Promise.reject(new RunnerFailure("brain_error", `tool call not sent: ${problem}`));
    const frameId = this.host.nextFrameId();
    // An empty id is the model's call without one (some OpenAI-compatible servers send ""): it gets a fresh one.
    const params = { id: options.id || `call_${frameId}`, name, arguments: args };
    return new Promise<ToolResult>((resolve, reject) => {
      const settle = (result: ToolResult | Error) => {
        this.waiting.delete(frameId);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      // Sent before it is awaited: a call too large to frame throws here and leaves nothing waiting. Brain's
      // reply comes on a later read, never between the two.
      this.host.send({
        attachment: this.attachment,
        turn: this.id,
        id: frameId,
        method: "tool.call",
        params,
      });
      this.waiting.set(frameId, settle);
      this.host.awaitToolReply(frameId, this, settle);
    });
  }

  takeSteering(): string[] {
    return this.steering.splice(0);
  }

  /** @internal Runs `body` in the turn's async context: a rejection left unhandled there is the turn's (leaks.ts). */
  within<T>(body: () => T): T {
    return withinScope(this, body);
  }

  /**
   * @internal A promise rejected and left unhandled in the turn's async context (its handler's own code, a timer or
   * callback it started): the turn fails with it alone, as a `brain_error` (or the RunnerFailure's code) naming it,
   * its signal aborts so what it still runs can stop, and the runner serves on. Once the turn is over, only logged.
   */
  leaked(reason: unknown): void {
    const what = `an unhandled promise rejection in turn ${this.id}`;
    const where = `runner: ${what} of attachment "${this.attachment}"`;
    if (this.ended || this.leakFailed) {
      const when = this.ended ? "after it was answered" : "after an earlier one failed it";
      this.host.log(`${where}, ${when} (the runner serves on): ${described(reason, "a promise")}`);
      return;
    }
    this.leakFailed = true;
    this.host.log(`${where} fails it (the runner serves on): ${described(reason, "a promise")}`);
    let code: RunnerFailure["code"] = "brain_error";
    try {
      if (reason instanceof RunnerFailure) code = reason.code;
    } catch {
      // a Proxy whose prototype cannot be read: brain_error
    }
    this.failByLeak(new RunnerFailure(code, `${what}: ${namedMessage(reason, "a promise")}`));
    this.abort();
  }

  /** @internal Queues steering text when the attachment has no `steer` handler. */
  queueSteering(text: string): void {
    this.steering.push(text);
  }

  /** @internal Interrupts the turn: the signal fires and every waiting tool call rejects. */
  abort(): void {
    if (this.signal.aborted) return;
    this.controller.abort(new TurnInterrupted());
    for (const [frameId, settle] of [...this.waiting]) {
      this.host.abandonToolReply(frameId);
      settle(new TurnInterrupted());
    }
  }

  /** @internal The prompt was answered. Tool calls still waiting are forgotten, never rejected: nobody awaits them. */
  end(): void {
    this.ended = true;
    for (const frameId of this.waiting.keys()) this.host.abandonToolReply(frameId);
    this.waiting.clear();
  }

  private writable(what: string): boolean {
    if (!this.ended) return true;
    this.host.log(`dropped an ${what} event for turn ${this.id}, which is over`);
    return false;
  }
}

/** What Brain would refuse in a tool call's name or arguments, or undefined. */
function toolCallProblem(name: unknown, args: unknown): string | undefined {
  if (typeof name !== "string" || name === "")
    return `the tool name must be a non-empty string, not ${JSON.stringify(name)}`;
  if (typeof args !== "object" || args === null || Array.isArray(args))
    return `the arguments of tool "${name}" must be a JSON object, not ${Array.isArray(args) ? "an array" : (JSON.stringify(args) ?? typeof args)}`;
  return undefined;
}

/** Splits text into pieces of at most `max` UTF-16 units, never between the halves of a surrogate pair. */
export function splitText(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const parts: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(at + max, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}

/**
 * Called as a host starts serving: a promise left rejected and unhandled fails the turn it was made in
 * (TurnState.leaked), and one made outside every turn is logged; the runner serves on (leaks.ts).
 */
export function catchTurnLeaks(log: (message: string) => void): void {
  catchLeaks((reason) =>
    log(
      `runner: an unhandled promise rejection outside any turn (the runner serves on): ${described(reason, "a promise")}`,
    ),
  );
}

/** Runs the prompt handler; its answer, or an interrupt when what broke was the interrupt itself. */
export async function runPrompt(handlers: Attachment, text: string, turn: TurnState) {
  try {
    // The handler runs in the turn's async context; a rejection it leaves unhandled there answers the prompt.
    const result = await turn.within(() => Promise.race([handlers.prompt(text, turn), turn.leakFailure]));
    if (turn.failure) throw turn.failure;
    return (result?.interrupted ?? turn.signal.aborted) ? { interrupted: true as const } : {};
  } catch (err) {
    // Whatever broke after an interrupt (a TurnInterrupted from callTool, an aborted request) is the
    // interrupt itself, unless the runner chose a code.
    if (turn.signal.aborted && !(err instanceof RunnerFailure)) return { interrupted: true as const };
    throw err;
  }
}
