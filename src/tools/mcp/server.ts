// One MCP server of a session as a ToolService: started with the session, restarted when it dies (with backoff,
// a few times, then again on the next call), stopped when the session closes. One whose first start failed has
// no tools for a call to restart it by: a later turn tries it again (retryStart), as its backoff allows. Whatever
// goes wrong, a call gets an error result the model can read, and the session gets a `tool.service` event;
// nothing throws.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { fetchFailure, neverSent } from "../../core/fetch-failure.js";
import type { ToolResult, ToolSchema } from "../../protocol/runner.js";
import { type ToolService, type ToolServiceEvent, textResult } from "../tool-service.js";
import { McpConnection, type ServerSpec } from "./connection.js";
import { toToolResult } from "./content.js";
import { type ExposedTool, exposeTools, shadowedMessage } from "./names.js";
import { MALFORMED_ANSWER } from "./stdio-transport.js";

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
/** MCP's own default is 60 s; tools that report progress get a fresh clock at each report. */
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/**
 * A call's deadline however often it reports progress. MCP says a client SHOULD have one "regardless of progress
 * notifications": without it, a tool that reports progress and never answers holds its turn until an interrupt.
 */
export const DEFAULT_CALL_TOTAL_TIMEOUT_MS = 3_600_000;
/** Waits before the automatic restarts after a crash; after the last, the next call tries once more. */
export const RESTART_DELAYS_MS = [100, 1_000, 5_000];
/**
 * How long after each failed first start a turn tries the server again; the last repeats. The next turn tries at
 * once (a server that was not ready yet); later waits keep a server that hangs at start from holding every turn.
 */
export const START_RETRY_DELAYS_MS = [0, 10_000, 60_000, 300_000];

const OUT_OF_RESTARTS =
  "; no more automatic restarts (it has answered no call since the last ones): the next call to one of its tools starts it again";

export class McpServerService implements ToolService {
  private connection: McpConnection | undefined;
  private starting: Promise<McpConnection | undefined> | undefined;
  private tools = new Map<string, ExposedTool>();
  /** Session names another server of the session has first (name → that server): this one leaves them out. */
  private readonly shadowed = new Map<string, string>();
  private restartTimer: NodeJS.Timeout | undefined;
  private failedRestarts = 0;
  private everStarted = false;
  private lastError = "it has not started";
  private failedStarts = 0;
  /** When a turn may try a server that never started again (Date.now() ms). */
  private startDueAt = 0;
  private stopped = false;
  /** The running server said its tools changed: a turn lists them afresh (refresh) before it starts. */
  private toolsChanged = false;
  /** Aborted by close: a start under way gives up instead of holding the close until its deadline. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly spec: ServerSpec,
    private readonly report: (event: ToolServiceEvent) => void,
    private readonly restartDelays: readonly number[] = RESTART_DELAYS_MS,
    private readonly startRetryDelays: readonly number[] = START_RETRY_DELAYS_MS,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** The first start; resolves either way (a server that failed offers no tools, and says why in an event). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Whether a turn starting now should try again a server that has never started. */
  get startDue(): boolean {
    return !this.everStarted && !this.stopped && this.starting === undefined && Date.now() >= this.startDueAt;
  }

  /**
   * Tries a server that has never started again; whether it runs now. `signal` (the turn's) gives up at once: an
   * interrupted try is not the server's failure, and is neither reported nor counted.
   */
  async retryStart(signal: AbortSignal): Promise<boolean> {
    if (!this.startDue) return false;
    return (await this.connect(AbortSignal.any([this.stopping.signal, signal]))) !== undefined;
  }

  /** Whether the running server said its tools changed since they were last listed. */
  get changeDue(): boolean {
    return this.toolsChanged && this.connection !== undefined && !this.stopped;
  }

  /**
   * Lists a server that said its tools changed afresh, and offers what it now has (the names another server has
   * first still left out). Whether they differ now: a failed list keeps the tools it had, and says why. `signal`
   * (the turn's) gives the list up at once, to be asked again by the next turn: a server slow to list must not
   * hold an interrupted turn until its startup timeout.
   */
  async refresh(signal?: AbortSignal): Promise<boolean> {
    const connection = this.connection;
    if (!this.changeDue || !connection) return false;
    this.toolsChanged = false;
    try {
      await connection.relist(this.spec.config.startup_timeout_ms ?? DEFAULT_STARTUP_TIMEOUT_MS, signal);
    } catch (err) {
      if (signal?.aborted) {
        if (this.connection === connection) this.toolsChanged = true;
        return false;
      }
      this.report({
        service: this.name,
        state: "started",
        tools: [...this.tools.keys()],
        message: `said its tools changed, but listing them failed (${(err as Error).message}): it keeps the ones it had`,
      });
      return false;
    }
    if (this.connection !== connection) return false;
    const before = JSON.stringify(await this.list());
    this.tools.clear();
    this.offer(connection, "started", "its tools changed (notifications/tools/list_changed)");
    // A server that says so without a change reopens no harness (a CLI's would restart for nothing).
    return JSON.stringify(await this.list()) !== before;
  }

  /** Leaves out the tools whose session names `clashes` gives to other servers, now and after a restart. */
  withhold(clashes: ReadonlyMap<string, string>): void {
    for (const [name, owner] of clashes) {
      this.shadowed.set(name, owner);
      this.tools.delete(name);
    }
  }

  async list(): Promise<ToolSchema[]> {
    return [...this.tools.values()].map((tool) => tool.schema);
  }

  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const tool = this.tools.get(name);
    if (!tool) return textResult(`MCP server "${this.name}" has no tool "${name}"`, true);
    const connection = await this.ready();
    if (!connection) return textResult(`MCP server "${this.name}" is not running: ${this.lastError}`, true);
    const timeoutMs = this.spec.config.call_timeout_ms ?? DEFAULT_CALL_TIMEOUT_MS;
    const totalMs = this.spec.config.call_total_timeout_ms ?? DEFAULT_CALL_TOTAL_TIMEOUT_MS;
    // The MCP client leaves a listener on the signal it is given for every call; a per-call signal keeps the
    // turn's own (shared by every call of the turn) from collecting them. Aborting it also tells the server
    // the call is cancelled, which the client's own total timeout (maxTotalTimeout) would not.
    const own = new AbortController();
    const forward = () => own.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    if (signal.aborted) forward();
    let overdue = false;
    const deadline = setTimeout(() => {
      overdue = true;
      own.abort();
    }, totalMs);
    try {
      const answer = await connection.call(tool.original, args, own.signal, timeoutMs);
      this.failedRestarts = 0;
      return toToolResult(answer);
    } catch (err) {
      const error = overdue
        ? `MCP server "${this.name}" did not finish ${tool.original} within ${totalMs / 1000} s, however much progress it reported (call_total_timeout_ms)`
        : this.callError(connection, tool.original, err, signal, timeoutMs);
      return textResult(error, true);
    } finally {
      clearTimeout(deadline);
      signal.removeEventListener("abort", forward);
    }
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort();
    clearTimeout(this.restartTimer);
    await this.starting?.catch(() => undefined);
    const connection = this.connection;
    this.connection = undefined;
    if (connection) {
      await connection.close();
      this.report({ service: this.name, state: "stopped" });
    }
  }

  /** The live connection, starting one when there is none (the automatic restarts gave up, or none is due). */
  private async ready(): Promise<McpConnection | undefined> {
    if (this.connection) return this.connection;
    if (this.stopped) return undefined;
    clearTimeout(this.restartTimer);
    return this.connect();
  }

  private connect(stop = this.stopping.signal): Promise<McpConnection | undefined> {
    this.starting ??= this.open(stop).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async open(stop: AbortSignal): Promise<McpConnection | undefined> {
    const restart = this.everStarted;
    const timeoutMs = this.spec.config.startup_timeout_ms ?? DEFAULT_STARTUP_TIMEOUT_MS;
    let connection: McpConnection;
    try {
      connection = await McpConnection.open(this.spec, timeoutMs, stop);
    } catch (err) {
      if (this.stopped || stop.aborted) return undefined;
      this.lastError = (err as Error).message;
      const next = restart ? (this.scheduleRestart() ? "" : OUT_OF_RESTARTS) : this.nextStartTry();
      this.report({ service: this.name, state: "failed", message: `${this.lastError}${next}` });
      return undefined;
    }
    if (this.stopped) {
      await connection.close();
      return undefined;
    }
    // The automatic restarts are not counted afresh here: a server that dies soon after each start would be
    // restarted for good, two events in its session's log each time. An answer to a call counts them afresh.
    this.everStarted = true;
    this.connection = connection;
    connection.onLost = (reason) => this.lost(connection, reason);
    connection.onToolsChanged = () => {
      if (this.connection === connection) this.toolsChanged = true;
    };
    this.offer(connection, restart ? "restarted" : "started");
    return connection;
  }

  /** Offers the connection's tools under their session names, and reports which. */
  private offer(connection: McpConnection, state: "started" | "restarted", why?: string): void {
    const { exposed, skipped } = exposeTools(this.name, connection.tools, this.spec.config.tools);
    // Names another server has first stay out, after a restart too.
    const clashes = new Map([...this.shadowed].filter(([name]) => exposed.delete(name)));
    // Tools the session was opened with keep their names; a restarted server's new tools are callable too.
    for (const [name, tool] of exposed) this.tools.set(name, tool);
    const messages = [
      ...(why ? [why] : []),
      ...(skipped.length ? [`skipped tools whose names clash: ${skipped.join(", ")}`] : []),
      ...(clashes.size ? [shadowedMessage(clashes)] : []),
    ];
    this.report({
      service: this.name,
      state,
      tools: [...exposed.keys()],
      ...(messages.length ? { message: messages.join("; ") } : {}),
    });
  }

  /** Whether an automatic restart is due (false also when the connection was not the live one). */
  private lost(connection: McpConnection, reason: string): boolean {
    if (this.connection !== connection || this.stopped) return false;
    this.connection = undefined;
    this.lastError = `it exited (${reason})`;
    const restarting = this.scheduleRestart();
    this.report({
      service: this.name,
      state: "exited",
      message: `${reason}${restarting ? "" : OUT_OF_RESTARTS}`,
    });
    return restarting;
  }

  /** Counts a failed first start, sets when a turn may try again, and says when. */
  private nextStartTry(): string {
    const delays = this.startRetryDelays;
    const delay = delays[Math.min(this.failedStarts, delays.length - 1)] ?? 0;
    this.failedStarts++;
    this.startDueAt = Date.now() + delay;
    return delay === 0
      ? "; the next turn tries it again"
      : `; the first turn after ${Math.ceil(delay / 1000)} s tries it again`;
  }

  /** Whether an automatic restart is due: none once they ran out since the server last answered a call. */
  private scheduleRestart(): boolean {
    if (this.stopped) return false;
    const delay = this.restartDelays[this.failedRestarts];
    // Out of automatic tries: the next call starts it (or fails with the reason).
    if (delay === undefined) return false;
    this.failedRestarts++;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.connect(), delay);
    this.restartTimer.unref();
    return true;
  }

  private callError(
    connection: McpConnection,
    tool: string,
    err: unknown,
    signal: AbortSignal,
    timeoutMs: number,
  ): string {
    const server = `MCP server "${this.name}"`;
    if (signal.aborted) return `${server}: the call to ${tool} was cancelled`;
    if (err instanceof McpError) {
      if (err.code === ErrorCode.RequestTimeout)
        return `${server} did not answer ${tool} within ${timeoutMs / 1000} s`;
      if (err.code === ErrorCode.ConnectionClosed) {
        const stopped = connection.stoppedBecause;
        if (stopped)
          return `${server} was stopped during the call to ${tool}: ${stopped}; it is being restarted`;
        return `${server} exited during the call to ${tool}; it is being restarted`;
      }
      if (err.data === MALFORMED_ANSWER)
        return `${server} answered ${tool} with ${err.message.replace(/^MCP error -?\d+: /, "")}`;
      return `${server} refused ${tool}: ${err.message}`;
    }
    // An answer, but not a tool result: the server is still there, and its other calls go on.
    const problems = resultProblems(err);
    if (problems)
      return `${server} answered ${tool} with something that is not an MCP tool result: ${problems}`;
    // Not an answer from the server: the connection itself failed (an HTTP server went away). Start afresh, and
    // end this connection for good: a stdio server's process would otherwise run on beside its replacement.
    // fetch says only "fetch failed": its cause (a reset, a refusal) is what tells a server that is down from
    // one that dropped the call halfway, and whether the call may have run.
    const why = fetchFailure(err);
    const dropped = (err as { cause?: unknown } | undefined)?.cause !== undefined;
    const ran = neverSent(err)
      ? "; the call did not reach it"
      : dropped
        ? "; it may have run the call before the connection failed: look for its effect before calling it again"
        : "";
    let next = "";
    if (this.connection === connection) {
      next = this.lost(connection, why) ? "; it is being reconnected" : OUT_OF_RESTARTS;
      void connection.close();
    }
    return `${server} could not be reached for ${tool}: ${why}${ran}${next}`;
  }
}

/** What is wrong with a result the MCP client could not read (its schema check failed), or undefined. */
function resultProblems(err: unknown): string | undefined {
  const issues = (err as { issues?: unknown } | undefined)?.issues;
  // The SDK checks results with zod 4's core ("$ZodError") or zod 3 ("ZodError"), as the schema is.
  if (!(err instanceof Error) || !/ZodError$/.test(err.name) || !Array.isArray(issues)) return undefined;
  const said = (issues as { path?: unknown[]; message?: string }[]).slice(0, 3).map((issue) => {
    const at = issue.path?.length ? issue.path.join(".") : "(the result)";
    return `${at}: ${issue.message ?? "invalid"}`;
  });
  return `${said.join("; ")}${issues.length > 3 ? `; and ${issues.length - 3} more` : ""}`;
}
