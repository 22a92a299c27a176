// One session on a nui extension harness over JSON-RPC (stdio or TCP): each Brain turn is one `harness.run`,
// its `harness.event` notifications become Brain events as they arrive, an interrupt is `harness.cancel`, and
// a host that does not end the run within the grace period is given up on (the next turn starts afresh).
import { randomUUID } from "node:crypto";
import {
  type ExpectedHistory,
  type Harness,
  HarnessError,
  type HarnessOptions,
  type PromptOutcome,
  type TurnContext,
} from "../../core/harness.js";
import { clip, RpcError } from "../../protocol/jsonrpc.js";
import { decodeHarnessEvent } from "../../protocol/nui/harness-event.js";
import type { HitlResponseEnvelope } from "../../protocol/nui/hitl.js";
import { HARNESS_METHODS, type HarnessRunParams } from "../../protocol/nui/jsonrpc.js";
import type { NativeFile } from "../../protocol/runner.js";
import type { HitlDesk, HitlRun } from "../nui/hitl-desk.js";
import type { ResumeState } from "../nui/resume-state.js";
import { cannotSteer, RunTranslator } from "../nui/run-translator.js";
import type { NuiSessionOptions } from "../nui/session-options.js";
import { ranOut } from "../read-gate.js";
import { WarningLimit } from "../warning-limit.js";
import type { TextSink } from "./rpc-peer.js";
import type { RpcTransport, Timeouts, TransportEvents } from "./transport.js";

interface ActiveRun extends HitlRun {
  translator: RunTranslator;
  /** Where the host's text events for this run go straight from the stream's bytes. */
  textSink: TextSink;
  /** Ends the turn without the host's reply (after Brain gave up on the host). */
  settle?: () => void;
  /** Cancels the interrupt's grace. */
  grace?: () => void;
}

export interface RpcHarnessParts {
  /** `ext:<extension>/<id>`, for messages. */
  name: string;
  harnessId: string;
  options: HarnessOptions;
  session: NuiSessionOptions;
  resume: ResumeState;
  desk: HitlDesk;
  timeouts: Timeouts;
  /**
   * Starts or dials the host; `runId` is the run that needs it (stdio hosts get it as NUI_RUN_ID). `closed`: the
   * session was closed meanwhile, so a host still starting is not waited for.
   */
  connect(runId: string, events: TransportEvents, closed: AbortSignal): Promise<RpcTransport>;
  /** Releases what the factory lent this session (the HITL desk, the API server). */
  release(): Promise<void>;
}

export class RpcHarness implements Harness {
  private transport: RpcTransport | undefined;
  /** The host being started or dialled, which the turn that asked for it may stop waiting for. */
  private connecting: Promise<RpcTransport> | undefined;
  private readonly closing = new AbortController();
  /**
   * The run a stdio host was started for: its NUI_RUN_ID, which nui's SDK keeps putting in later runs' HITL
   * requests. None for a TCP host: it was told no run id, so the first run on its connection ends as any other does.
   */
  private hostRunId: string | undefined;
  private run: ActiveRun | undefined;
  private readonly warnings = new WarningLimit((message) =>
    this.parts.options.emit({
      type: "harness.warning",
      ...(this.run ? { turn: this.run.turn } : {}),
      data: { message },
    }),
  );

  constructor(private readonly parts: RpcHarnessParts) {}

  /** The run a HITL request belongs to: the running one (a stale NUI_RUN_ID still means the running run). */
  runFor(_runId: string | undefined): HitlRun | undefined {
    return this.run;
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    if (this.run) throw new HarnessError("brain_error", "a run is already working in this session");
    const { options, session, resume } = this.parts;
    const runId = `run-${randomUUID()}`;
    const translator = new RunTranslator(ctx.turn, options, (event) => this.onHitl(run, event));
    const run: ActiveRun = {
      runId,
      turn: ctx.turn,
      signal: ctx.signal,
      translator,
      textSink: {
        runId,
        plainText: (buf, start, end, view) => translator.plainText(buf, start, end, view),
      },
    };
    this.run = run;
    try {
      // A host that hangs at its start would hold an interrupted turn for the whole open timeout.
      const transport = await this.ensureTransport(run.runId, ctx.signal);
      if (!transport) return { interrupted: true };
      const params: HarnessRunParams = {
        message: text,
        runId: run.runId,
        harnessId: this.parts.harnessId,
        ...(resume.sessionId ? { sessionId: resume.sessionId } : {}),
        ...(session.workingDir ? { workingDir: session.workingDir } : {}),
        ...(options.config.system_prompt ? { systemPrompt: options.config.system_prompt } : {}),
        ...(options.config.model ? { model: options.config.model } : {}),
      };
      const forced = new Promise<void>((resolve) => {
        run.settle = resolve;
      });
      try {
        await Promise.race([transport.peer.request(HARNESS_METHODS.run, params), forced]);
      } catch (err) {
        // A run that ended without its reply still ran: what the agent named (or that it named nothing) is kept,
        // so the next open does not take this dir for one that lost its id.
        await resume.update(run.translator.sessionId).catch(() => {});
        if (ctx.signal.aborted) return { interrupted: true };
        if (err instanceof RpcError)
          throw new HarnessError("provider_error", `${this.parts.name}: harness.run failed: ${err.message}`);
        throw err instanceof HarnessError ? err : new HarnessError("brain_error", (err as Error).message);
      }
      const { translator } = run;
      translator.finish(ctx.signal.aborted ? "interrupted" : translator.error ? "error" : "done");
      await resume.update(translator.sessionId);
      if (ctx.signal.aborted) return { interrupted: true };
      if (translator.error)
        throw new HarnessError("provider_error", `${this.parts.name}: ${translator.error}`);
      return { interrupted: false };
    } finally {
      run.grace?.();
      run.translator.flushWarnings(this.parts.name);
      this.warnings.flush(this.parts.name);
      this.run = undefined;
    }
  }

  async steer(): Promise<void> {
    throw cannotSteer(this.parts.name);
  }

  async interrupt(turn: string): Promise<void> {
    const run = this.run;
    const transport = this.transport;
    if (!run || run.turn !== turn || run.grace || !transport) return;
    const graceMs = this.parts.timeouts.interruptGraceMs;
    // The grace counts only while Brain reads the host: with the session's log behind, the host's answer to the
    // cancel may wait unread in its pipe or socket, and giving up on it then would blame a host that stopped.
    let waited!: () => void;
    const wait = new Promise<void>((resolve) => {
      waited = resolve;
    });
    const stop = transport.afterRead(graceMs, (end) => {
      waited();
      if (this.run !== run) return;
      // Brain's own word, never held back behind what the host's events drew.
      const late = ranOut(end, graceMs, "grace");
      const message = `${this.parts.name} did not end the cancelled run${late}; gave up on its host`;
      this.parts.options.emit({ type: "harness.warning", turn: run.turn, data: { message } });
      run.settle?.();
      transport.abandon();
    });
    run.grace = () => {
      stop();
      waited();
    };
    // The cancel has no timeout of its own: a timer would run out while its answer waits unread too (and that
    // answer would then be warned about as one to no request). The grace, or the run's end, ends the wait.
    const cancelled = transport.peer.request(HARNESS_METHODS.cancel, { runId: run.runId });
    await Promise.race([cancelled.catch(() => {}), wait]);
  }

  async checkpoint(): Promise<NativeFile[]> {
    return this.parts.resume.files();
  }

  /** The agent holds the conversation; Brain keeps the id that finds it, which must be there after answered turns. */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    return this.parts.resume.missing(this.parts.name, expected);
  }

  async close(): Promise<void> {
    this.closing.abort();
    const transport = this.transport;
    this.transport = undefined;
    await transport?.close().catch(() => {});
    await this.parts.release();
  }

  isAlive(): boolean {
    return this.transport === undefined || this.transport.isAlive();
  }

  /** The live transport, or undefined once `signal` aborts first (the start goes on, for the next turn). */
  private async ensureTransport(runId: string, signal: AbortSignal): Promise<RpcTransport | undefined> {
    if (this.transport?.isAlive()) return this.transport;
    this.connecting ??= this.reconnect(runId).finally(() => {
      this.connecting = undefined;
    });
    return untilAborted(this.connecting, signal);
  }

  private async reconnect(runId: string): Promise<RpcTransport> {
    await this.transport?.close().catch(() => {});
    this.transport = undefined;
    this.hostRunId = undefined;
    const transport = await this.parts.connect(
      runId,
      {
        onNotification: (method, params) => this.onNotification(method, params),
        onWarning: (message) => this.warn(message),
        textSink: () => this.run?.textSink,
        backlog: this.parts.options.backlog,
        onFatal: () => {
          // The run's request fails with the reason; between runs the next turn reconnects.
        },
      },
      this.closing.signal,
    );
    if (this.closing.signal.aborted) {
      await transport.close().catch(() => {});
      throw new HarnessError("brain_error", `${this.parts.name} was closed while its host started`);
    }
    this.transport = transport;
    this.hostRunId = transport.hostRunId;
    return transport;
  }

  private onNotification(method: string, params: unknown): void {
    if (method !== HARNESS_METHODS.event)
      return this.warn(`notification "${clip(method)}" is not part of nui's protocol; ignored`);
    const run = this.run;
    const { runId, type } = (params ?? {}) as { runId?: unknown; type?: unknown };
    // "" names no run, as no runId does (nui's seed gives events none): the SDK's default from a thread of its own.
    const other = typeof runId === "string" && runId !== "" && runId !== run?.runId;
    if (!run || (other && runId !== this.hostRunId)) {
      return this.warn(`harness.event for run "${clip(String(runId))}", which is not running; ignored`);
    }
    // As runFor: nui's SDK tags a HITL request with the host's NUI_RUN_ID in every run, so that one means the
    // running run. Anything else naming it was sent for the first run, which has ended: in this run it would add
    // that run's text, or fail this turn with its error.
    if (other && type !== "hitl_request") {
      return this.warn(
        `harness.event "${clip(String(type))}" for run "${clip(runId)}", the run the host was started for, which has ended: only a hitl_request may name it after that run; ignored`,
      );
    }
    const decoded = decodeHarnessEvent(params);
    if (decoded.ok) return run.translator.handle(decoded.event);
    run.translator.warn(decoded.reason);
  }

  private onHitl(
    run: ActiveRun,
    event: { requestId: string; kind: string; payload: Record<string, unknown> },
  ) {
    this.parts.desk.fromEvent(event, run, (response: HitlResponseEnvelope) => {
      // The host asked over the protocol: the answer goes back the same way (Brain's SDKs wait for it).
      const peer = this.transport?.peer;
      if (!peer) return;
      const answer = (sent: HitlResponseEnvelope) =>
        peer.notify(HARNESS_METHODS.hitlResponse, {
          runId: run.runId,
          requestId: sent.requestId,
          response: sent,
        });
      // An answer too long for a line would leave the host waiting for good: it hears that instead.
      if (!answer(response)) {
        const { answers: _answers, ...rest } = response;
        answer({
          ...rest,
          status: "cancelled",
          answers: {
            reason: "the answer was longer than the 4 MiB line a host reads; ask for a shorter one",
          },
        });
      }
    });
  }

  private warn(message: string): void {
    this.warnings.warn(message);
  }
}

/** `work`'s value, or undefined as soon as `signal` aborts (`work` goes on; its failure is then dropped). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
