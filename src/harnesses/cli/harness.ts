// The turn plumbing every CLI family shares: one running turn at a time, follow-ups queued until the CLI's own
// turn ends (still inside the same Brain turn), the interrupt's grace period and then a kill, warnings, failing a
// turn with the program's stderr, lines that are not JSON, and the small state file that records which native
// session a native dir holds. A family says only how to start its program, send a prompt, ask it to stop, read
// what it writes, and which of its files a checkpoint carries.
import {
  type Harness,
  HarnessError,
  type HarnessOptions,
  type PermissionVerdict,
  type PromptOutcome,
  type ToolUse,
  type TurnContext,
} from "../../core/harness.js";
import type { Question } from "../../protocol/events.js";
import { preview } from "../../protocol/frames.js";
import type { LineHead } from "../../protocol/head-lines.js";
import type { NativeFile } from "../../protocol/runner.js";
import type { ToolEndpoint } from "../../tools/endpoint/index.js";
import type { Spawner } from "../process/spawner.js";
import { ranOut } from "../read-gate.js";
import { forgetRewrittenSync, REWRITTEN_MARKER } from "../rewritten-files.js";
import { argsWarnings } from "./args-warnings.js";
import { EndpointCalls, isBound } from "./bound.js";
import { type AnswerSource, afterRead, CliProcess, withTail } from "./child.js";
import { cliEnvironment } from "./environment.js";
import type { CliEvent, CliTurnEnd } from "./events.js";
import type { CliFamilyDescriptor, CliOpening, CliTimeouts } from "./family.js";
import { listNativeFiles, readJsonFile, writeJsonFile } from "./files.js";
import { type CliFactoryOptions, type CliSessionOptions, sessionOptions, workingDir } from "./options.js";
import { type CliProvider, CliServices } from "./services.js";
import { isTurnEvent, TurnSlot } from "./turn.js";

/** A family's opened harness: what CliHarness needs to know, prepared once by prepareCli(). */
export interface CliContext {
  family: CliFamilyDescriptor;
  options: HarnessOptions;
  program: string;
  host: CliFactoryOptions;
  session: CliSessionOptions;
  /** The agent's working directory. */
  cwd: string;
  timeouts: CliTimeouts;
  /** Brain's record of which native session this dir holds, relative to the native dir; none for some CLIs. */
  stateFile?: string;
  /** `bound` tool mode: only Brain's tools, through the session's tool endpoint (see ./bound.ts). */
  bound: boolean;
  /** Where the program is started (see Spawner); none: forked from Brain. */
  spawner?: Spawner;
}

/**
 * Reads the session options, working directory and tool mode; in `native` mode, says that bound tools do not
 * reach the CLI.
 */
export function prepareCli(opening: CliOpening, stateFile?: string): CliContext {
  const { family, options } = opening;
  const session = sessionOptions(family.harness, options.config);
  const bound = isBound(family, options);
  const cwd = workingDir(family.harness, options.dir, session, options.container?.user);
  const warnings = argsWarnings(family.harness, session);
  if (!bound && options.tools.length > 0) {
    const names = options.tools.map((t) => t.name).join(", ");
    warnings.unshift(
      `${family.harness}: ${family.title} runs its own tools; the session's bound tools (${names}) are not offered to it (config.tool_mode "bound" offers only them)`,
    );
  }
  for (const message of warnings) options.emit({ type: "harness.warning", data: { message } });
  return { ...opening, session, cwd, bound, ...(stateFile ? { stateFile } : {}) };
}

/** The program run once, with the session's working directory and launcher. */
export interface CliProgramRun {
  command: string;
  env: Record<string, string>;
  cwd: string;
  launcher?: string[];
}

/** What a family has running: the program, where it answers, and whatever else it talks to it through. */
export interface CliConnection extends AnswerSource {
  /** How to end it on close; default: the program's own stop (stdin closed, then signals). */
  stop?(): Promise<void>;
}

export abstract class CliHarness<C extends CliConnection> implements Harness {
  protected readonly turn = new TurnSlot();
  protected connection: C | undefined;
  protected readonly options: HarnessOptions;
  private starting: Promise<C> | undefined;
  private queued: string[] = [];
  private cancelGrace: (() => void) | undefined;
  private closed = false;
  private readonly services: CliServices;
  /** A cancelled result reaching the CLI over MCP before its abort would be sent on to the model. */
  readonly cancelsToolsAfterInterrupt = true;
  private readonly endpointCalls = new EndpointCalls((name) => this.isEndpointTool(name));
  /** Programs already reported lost (see lost()), or retired by their family: their exit fails no turn. */
  protected readonly forgotten = new WeakSet<CliProcess>();

  constructor(protected readonly ctx: CliContext) {
    this.options = ctx.options;
    this.services = new CliServices(ctx.options, () => this.turn.current, ctx.host.credentialProxy !== false);
  }

  /** Starts the program, and whatever connects to it; called when a prompt finds none running. */
  protected abstract connect(): C | Promise<C>;
  /** Hands the CLI a prompt, or a follow-up queued during the Brain turn. */
  protected abstract send(connection: C, text: string): void | Promise<void>;
  /** Asks the CLI to end its turn (`connection` undefined while starting); a CLI that answers: once it did. */
  protected abstract abort(connection: C | undefined): void | Promise<void>;
  /** The CLI's own files a checkpoint carries (the state file is added to them). */
  protected abstract nativeFiles(): Promise<NativeFile[]>;
  /** Called as a prompt or follow-up is about to go out, before the program is (re)started. */
  protected beforeSend(): void {}
  /** In `bound` mode: whether a tool name the CLI reports is its name for one of the endpoint's tools. */
  protected isEndpointTool(_name: string): boolean {
    return false;
  }

  /** The session's tool endpoint, started at first use (opening stays passive) and closed with the harness. */
  protected toolEndpoint(): Promise<ToolEndpoint> {
    return this.services.toolEndpoint();
  }

  /** The provider as the CLI is to see it: through the credential proxy when it has a key (./services.ts). */
  protected provider(...wanted: Parameters<CliServices["provider"]>): Promise<CliProvider> {
    return this.services.provider(...wanted);
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    const done = this.turn.begin(ctx);
    this.deliver(text);
    return done;
  }

  /** Queued for when the CLI's own turn ends; families that steer live override this. */
  async steer(text: string, turn: string): Promise<void> {
    this.queue(text, turn);
  }

  async interrupt(turn: string): Promise<void> {
    const running = this.turn.current;
    if (!running || running.id !== turn || running.interrupted) return;
    running.interrupted = true;
    this.queued = [];
    const aborting = this.abort(this.connection);
    const graceMs = this.ctx.timeouts.interruptGraceMs;
    // Counted only while what the CLI answers is read: with the session's log behind, the end of the turn it wrote
    // at once may wait unread in its pipe, and a kill would blame the CLI and tear its files (ReadGate.afterRead).
    this.cancelGrace = afterRead(this.connection, graceMs, (end) => {
      if (this.turn.current !== running) return;
      const child = this.connection?.child;
      if (child) {
        this.warn(`the CLI did not end the interrupted turn${ranOut(end, graceMs, "grace")}; killed it`);
        return child.kill("SIGKILL");
      }
      // Still starting: there is nothing to kill yet, and the start may wait long. The turn ends here; the
      // program, once up, waits for the next prompt (deliver sends this one only into its own turn).
      this.warn(`the CLI was still starting ${graceMs} ms after the interrupt; ended the turn without it`);
      this.failTurn(new HarnessError("brain_error", `${this.label}: interrupted while starting`));
    });
    await Promise.race([aborting, running.ended]);
  }

  async checkpoint(): Promise<NativeFile[]> {
    const { stateFile } = this.ctx;
    const state = stateFile
      ? await listNativeFiles(this.options.dir, ".", {
          include: (path) => path === stateFile,
          appendOnly: () => false,
        })
      : [];
    return [...state, ...(await this.nativeFiles())];
  }

  /** A file rewritten in place (REWRITTEN_MARKER) is now stored whole: later checkpoints build on it again. */
  checkpointed(files: NativeFile[]): void {
    forgetRewrittenSync(this.options.dir, REWRITTEN_MARKER, files);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancelGrace?.();
    this.turn.fail(new HarnessError("brain_error", `${this.label}: the session closed`));
    const connection = this.connection;
    this.connection = undefined;
    if (connection) await this.stopConnection(connection);
    // A program still starting is stopped as soon as it is up (ensureConnection): wait for that too.
    await this.starting?.catch(() => {});
    await this.services.close();
  }

  private async stopConnection(connection: C): Promise<void> {
    await (connection.stop ? connection.stop() : connection.child.stop());
  }

  protected get label(): string {
    return this.ctx.family.harness;
  }

  /** Holds a steer of `turn` for when the CLI's own turn ends; refuses it once `turn` is not the one running. */
  protected queue(text: string, turn: string): void {
    this.requireTurn(turn);
    this.queued.push(text);
  }

  /**
   * Refuses a steer for a turn that is no longer running: it came as the CLI ended the turn, after the last
   * chance to send it as a follow-up, and held it would go out inside the session's next turn instead. The session
   * turns this into a conflict its client is told of (src/core/running-turn.ts, deliverSteer).
   */
  protected requireTurn(turn: string): void {
    if (this.turn.current?.id !== turn)
      throw new HarnessError("brain_error", `${this.label}: turn ${turn} ended before the steer reached it`);
  }

  /** The CLI's own turn ended: the next queued follow-up goes out, or the Brain turn settles. */
  protected endTurn(end: CliTurnEnd): void {
    const turn = this.turn.current;
    if (!turn) return;
    if (end.outcome === "completed" && !turn.interrupted && this.queued.length > 0) {
      this.deliver(this.queued.shift()!);
      return;
    }
    this.cancelGrace?.();
    this.queued = [];
    if (end.outcome === "failed") return this.turn.fail(new HarnessError(end.code, end.message));
    this.turn.settle(end.outcome === "aborted");
  }

  /** Fails the running turn (or settles it as interrupted, when it was being interrupted). */
  protected failTurn(err: Error): void {
    this.cancelGrace?.();
    this.queued = [];
    this.turn.fail(err instanceof HarnessError ? err : new HarnessError("brain_error", err.message));
  }

  protected warn(message: string): void {
    const turn = this.turn.current;
    this.options.emit({
      type: "harness.warning",
      ...(turn ? { turn: turn.id } : {}),
      data: { message: `${this.label}: ${message}` },
    });
  }

  /** An event of the running turn (a tool result only of its own calls: isTurnEvent); dropped between turns. */
  protected emitEvent(event: CliEvent): void {
    const turn = this.turn.current;
    const logged = this.ctx.bound ? this.endpointCalls.filter(event) : event;
    if (turn && logged && isTurnEvent(turn, logged)) this.options.emit({ ...logged, turn: turn.id });
  }

  /**
   * Brain's policy on a tool the CLI wants to run; denied when no turn is running, or when the request could
   * not be made (its event not logged). Never rejects: families answer in the background, where a rejection
   * would crash the daemon and the CLI would wait for its answer for good.
   */
  protected permit(use: ToolUse): Promise<PermissionVerdict> {
    const turn = this.turn.current;
    if (!turn) return Promise.resolve({ decision: "deny", reason: "no turn is running" });
    return this.options.permit(turn.id, use, turn.signal).catch((err: Error) => {
      this.warn(`could not ask about ${preview(use.tool)}, so it is denied: ${err.message}`);
      return { decision: "deny", reason: "Brain could not ask the session's policy" };
    });
  }

  /** A question to the session's clients; "" when no turn is running, no one answers, or it could not be asked. */
  protected ask(question: Question): Promise<string> {
    const turn = this.turn.current;
    if (!turn) return Promise.resolve("");
    return this.options.ask(turn.id, question, turn.signal).catch((err: Error) => {
      this.warn(`could not ask the session's clients, so the question goes unanswered: ${err.message}`);
      return "";
    });
  }

  protected readState<T>(): Promise<T | undefined> {
    return this.ctx.stateFile
      ? readJsonFile<T>(this.options.dir, this.ctx.stateFile)
      : Promise.resolve(undefined);
  }

  protected writeState(state: unknown): Promise<void> {
    if (!this.ctx.stateFile) throw new Error(`${this.label} keeps no state file`);
    return writeJsonFile(this.options.dir, this.ctx.stateFile, state);
  }

  /** The CLI's environment: a HOME of its own under the native dir, the family's variables, the host's. */
  protected environment(family: Record<string, string>): Record<string, string> {
    return cliEnvironment(this.options.dir, family, this.ctx.host.env, this.options.container?.user);
  }

  /** How to run the program once, beside the session's (a probe, an export): its path, cwd and launcher. */
  protected programRun(env: Record<string, string>): CliProgramRun {
    const { program, cwd, host } = this.ctx;
    return { command: program, env, cwd, ...(host.launcher ? { launcher: host.launcher } : {}) };
  }

  /**
   * Starts the program with stdout read as JSON lines. A line that is not JSON, or the program going away,
   * fails the running turn (after `lost`, for whatever else waits on the program); between turns that is
   * harmless: the next prompt starts it again. `head` may take lines from their start instead (see CliSpawn).
   */
  protected spawn(
    args: string[],
    env: Record<string, string>,
    read: (message: unknown) => void,
    lost?: (err: HarnessError) => void,
    head?: LineHead,
  ): CliProcess {
    const { program, cwd, host } = this.ctx;
    const child: CliProcess = new CliProcess({
      label: this.label,
      command: program,
      args,
      env,
      cwd,
      ...(host.launcher ? { launcher: host.launcher } : {}),
      ...(this.ctx.spawner ? { spawner: this.ctx.spawner } : {}),
      ...(head ? { onHead: head } : {}),
      backlog: this.options.backlog,
      onLine: (line) => {
        const text = line.endsWith("\r") ? line.slice(0, -1) : line;
        if (text.trim() === "") return;
        let decoded: unknown;
        try {
          decoded = JSON.parse(text);
        } catch {
          child.kill("SIGKILL");
          const what = `${this.ctx.family.program} wrote a line that is not JSON on stdout: ${preview(text)}`;
          const err = new HarnessError("brain_error", withTail(`${this.label}: ${what}`, child));
          return this.lost(child, err, lost);
        }
        read(decoded);
      },
      onExit: (reason) => this.lost(child, new HarnessError("brain_error", reason), lost),
    });
    return child;
  }

  /**
   * The program is gone: forget it, and fail the running turn. Said once per program: one given up on before it
   * exited (it wrote garbage) is replaced at the next prompt, and its exit then is not that prompt's failure.
   */
  protected lost(child: CliProcess | undefined, err: HarnessError, also?: (err: HarnessError) => void): void {
    if (child) {
      if (this.forgotten.has(child)) return;
      this.forgotten.add(child);
    }
    if (child && this.connection?.child === child) this.connection = undefined;
    also?.(err);
    this.failTurn(err);
  }

  /** (Re)starts the program if it is not running, then sends; a failure fails the running turn. */
  private deliver(text: string): void {
    this.beforeSend();
    const turn = this.turn.current;
    const run = async () => {
      const connection = await this.ensureConnection();
      // The turn ended while the program started (interrupted, closed): its text is not the next turn's.
      if (!turn || this.turn.current !== turn) return;
      // Interrupted while the program started: abort() had nothing to ask then, and the text, sent now, would
      // run the model and its tools after the client stopped the turn. It never goes out; the turn ends here.
      if (turn.interrupted) return this.endTurn({ outcome: "aborted" });
      await this.send(connection, text);
    };
    run().catch((err: Error) => {
      if (this.turn.current === turn) this.failTurn(err);
    });
  }

  private ensureConnection(): C | Promise<C> {
    if (this.closed) throw new HarnessError("brain_error", `${this.label}: the harness is closed`);
    if (this.connection?.child.alive) return this.connection;
    if (this.starting) return this.starting;
    const made = this.connect();
    if (!(made instanceof Promise)) {
      this.connection = made;
      return made;
    }
    this.starting = made
      .then(async (connection) => {
        // Closed while it started: close() found nothing to stop, so this program would run on unowned.
        if (this.closed) {
          await this.stopConnection(connection);
          throw new HarnessError("brain_error", `${this.label}: the harness is closed`);
        }
        this.connection = connection;
        return connection;
      })
      .finally(() => {
        this.starting = undefined;
      });
    return this.starting;
  }
}
