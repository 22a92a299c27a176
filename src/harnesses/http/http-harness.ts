// One session on an HTTP/SSE agent: each Brain turn is one POST /run, its SSE events become Brain events as
// they arrive, an interrupt is POST /cancel {runId} and, if the agent keeps streaming past the grace period,
// the end of the stream from Brain's side. While the session's log is behind, the stream is not read (see
// ReadGate): a flooding agent's writes then wait on TCP instead of growing Brain's memory.
import { randomUUID } from "node:crypto";
import {
  type ExpectedHistory,
  type Harness,
  HarnessError,
  type HarnessOptions,
  type PromptOutcome,
  type TurnContext,
} from "../../core/harness.js";
import type { NativeFile } from "../../protocol/runner.js";
import { HeldReads } from "../held-reads.js";
import type { HitlDesk, HitlRun } from "../nui/hitl-desk.js";
import { ResumeState } from "../nui/resume-state.js";
import { cannotSteer, RunTranslator } from "../nui/run-translator.js";
import type { NuiSessionOptions } from "../nui/session-options.js";
import { ReadGate } from "../read-gate.js";
import type { AgentState } from "./agent-state.js";
import type { HttpAgentClient, RunBody } from "./client.js";

export interface HttpTimeouts {
  interruptGraceMs: number;
  shutdownMs: number;
}

export interface HttpHarnessParts {
  name: string;
  client: HttpAgentClient;
  options: HarnessOptions;
  session: NuiSessionOptions;
  resume: ResumeState;
  timeouts: HttpTimeouts;
  /** When the agent reaches Brain's NUI_API_URL (a host Brain started): its REST HITL requests land here. */
  desk?: HitlDesk;
  /** When the agent keeps its conversation in the native dir: its checkpoint and verify are asked of it. */
  state?: AgentState;
  /** Why the agent went away (a container's state and log tail), added to a brain_error that ends a turn. */
  explain?(): Promise<string>;
  /** Releases the agent: nothing for a remote one, /shutdown + docker stop for a container. */
  release(): Promise<void>;
}

interface ActiveRun extends HitlRun {
  abort: AbortController;
  /** Holds the run's stream unread while the session's log is behind; waits on the agent count while it reads. */
  gate: ReadGate;
  /** Cancels the interrupt's grace, once one was asked for. */
  grace?: () => void;
}

export class HttpHarness implements Harness {
  private run: ActiveRun | undefined;
  private broken = false;

  constructor(private readonly parts: HttpHarnessParts) {}

  /** The harness of one session on `client`'s agent (named as the agent names itself), its resume state loaded. */
  static async open(parts: Omit<HttpHarnessParts, "name" | "resume">): Promise<HttpHarness> {
    return new HttpHarness({
      ...parts,
      name: parts.client.name,
      // Recorded with the id: a fork asks it whether a copy of the dir is the conversation (agentSideIn).
      resume: await ResumeState.load(parts.options.dir, parts.state !== undefined),
    });
  }

  runFor(_runId: string | undefined): HitlRun | undefined {
    return this.run;
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    if (this.run) throw new HarnessError("brain_error", "a run is already working in this session");
    const { options, session, resume, client, name } = this.parts;
    const held = new HeldReads();
    const run: ActiveRun = {
      runId: `run-${randomUUID()}`,
      turn: ctx.turn,
      signal: ctx.signal,
      abort: new AbortController(),
      gate: new ReadGate(() => held),
    };
    // A stream given up on (the grace ran out, the session closed) is not held: its reader must see the abort.
    run.abort.signal.addEventListener("abort", () => run.gate.stop(), { once: true });
    const { backlog } = options;
    const beforeEvent = backlog ? () => held.check(() => run.gate.check("session", backlog)) : undefined;
    this.run = run;
    const translator = new RunTranslator(ctx.turn, options, (event) => {
      if (this.parts.desk?.has(event.requestId)) return; // made through NUI_API_URL: already asked
      translator.warn(
        `${name} raised HITL request "${event.requestId}" in its event stream; an HTTP agent must create it through NUI_API_URL (POST /api/hitl/requests) for Brain to answer it`,
      );
    });
    const body: RunBody = {
      message: text,
      runId: run.runId,
      ...this.settings(),
      ...(Object.keys(session.env).length ? { env: session.env } : {}),
    };
    try {
      let ending: Awaited<ReturnType<HttpAgentClient["run"]>>;
      try {
        ending = await client.run(
          body,
          run.abort.signal,
          (decoded) => {
            if (decoded.ok) return translator.handle(decoded.event);
            translator.warn(decoded.reason);
          },
          beforeEvent,
        );
      } catch (err) {
        // A run that broke off still ran: what the agent named (or that it named nothing) is kept, so the next
        // open does not take this dir for one that lost its id.
        await resume.update(translator.sessionId).catch(() => {});
        if (ctx.signal.aborted) return { interrupted: true };
        if (err instanceof HarnessError && err.code === "brain_error") {
          this.broken = true;
          throw await this.explained(err.message);
        }
        throw err;
      }
      translator.finish(ctx.signal.aborted ? "interrupted" : translator.error ? "error" : "done");
      await resume.update(translator.sessionId);
      if (ctx.signal.aborted) return { interrupted: true };
      if (translator.error) throw new HarnessError("provider_error", `${name}: ${translator.error}`);
      if (ending === "ended") {
        this.broken = true;
        throw await this.explained(`${name}: the agent closed its event stream before a done event`);
      }
      return { interrupted: false };
    } finally {
      run.grace?.();
      run.gate.stop();
      translator.flushWarnings(name);
      this.run = undefined;
    }
  }

  /** What a run tells the agent of the session besides its message: which conversation, where, with what. */
  private settings(): Omit<RunBody, "message" | "runId" | "env"> {
    const { options, session, resume } = this.parts;
    return {
      ...(resume.sessionId ? { sessionId: resume.sessionId } : {}),
      ...(session.workingDir ? { workingDir: session.workingDir } : {}),
      ...(options.config.system_prompt ? { systemPrompt: options.config.system_prompt } : {}),
      ...(options.config.model ? { model: options.config.model } : {}),
    };
  }

  private async explained(message: string): Promise<HarnessError> {
    const why = await this.parts.explain?.().catch(() => undefined);
    return new HarnessError("brain_error", why ? `${message}; ${why}` : message);
  }

  async steer(): Promise<void> {
    throw cannotSteer(this.parts.name);
  }

  async interrupt(turn: string): Promise<void> {
    const run = this.run;
    if (!run || run.turn !== turn || run.grace) return;
    // Ask the agent to stop; stop listening when it keeps going past the grace period. Counted while its stream is
    // read: while the log is behind, the agent's end of the run may wait unread on TCP, and the silence is Brain's
    // (giving up then would lose what it wrote before it stopped).
    run.grace = run.gate.afterRead(this.parts.timeouts.interruptGraceMs, () => run.abort.abort());
    await this.parts.client.cancel(run.runId, this.parts.timeouts.interruptGraceMs);
  }

  /** The resume file, and the agent's own files when it keeps them in the native dir. */
  async checkpoint(): Promise<NativeFile[]> {
    const { resume, state } = this.parts;
    const own = await resume.files();
    return state && resume.sessionId ? [...own, ...(await state.files(this.settings()))] : own;
  }

  /**
   * The agent holds the conversation; Brain keeps the id that finds it, which must be there after answered turns.
   * An agent that keeps its files in the native dir is asked whether they hold it.
   */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    const { resume, state, name } = this.parts;
    const lost = resume.missing(name, expected);
    if (lost || !state || !resume.sessionId) return lost;
    return state.missing(this.settings(), expected);
  }

  async close(): Promise<void> {
    this.run?.abort.abort();
    try {
      await this.parts.release();
    } finally {
      // After release, whose /shutdown is the session's last request to the agent.
      await this.parts.client.close();
    }
  }

  /** False after the agent could not be reached or broke a stream: the session opens it afresh. */
  isAlive(): boolean {
    return !this.broken;
  }
}
