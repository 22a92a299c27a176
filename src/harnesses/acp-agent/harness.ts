// One session of an ACP agent (Agent Client Protocol on stdio), driven with the ACP SDK's client side. The agent
// starts at the first prompt (opening is passive) and again whenever it has gone away: `initialize`, then
// `session/load` of the session this native dir holds (its history replayed to us and dropped: the log has it),
// or `session/new` with the working directory and the MCP servers. Prompts are `session/prompt`, interrupts
// `session/cancel`; `session/request_permission` goes to Brain's policy, then the session's clients, and is
// denied when no one answers. Follow-ups during a turn wait for the agent's turn to end (ACP cannot steer).

import { join } from "node:path";
import {
  type McpServer as AcpMcpServer,
  type AnyMessage,
  type ClientConnection,
  client,
  methods,
  type NewSessionRequest,
  PROTOCOL_VERSION,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import { missingHistory } from "../../core/native-check.js";
import type { NativeFile } from "../../protocol/runner.js";
import type { StdioServerSpec } from "../../tools/endpoint/index.js";
import { type CliProcess, withTail } from "../cli/child.js";
import type { CliOpening } from "../cli/family.js";
import { type CliConnection, type CliContext, CliHarness, prepareCli } from "../cli/harness.js";
import { acpMcpServers, answerKinds, policyUse } from "./mcp-servers.js";
import { type AcpAgentContext, type AcpProfile, agentContext } from "./profile.js";
import { AcpUpdateMapper } from "./updates.js";
import { refuseOtherVersion } from "./version.js";

export const STATE_FILE = "acp.json";

interface AcpState {
  session_id: string;
}

interface Connection extends CliConnection {
  child: CliProcess;
  acp: ClientConnection;
  sessionId: string;
}

/** Updates a load's replay sends this close together; the next turn's first update comes after a model request. */
const REPLAY_QUIET_MS = 300;
const REPLAY_MAX_MS = 10_000;
/** How long a checkpoint waits for the agent's session file to hold the last turn. */
const WRITE_WAIT_MS = 5_000;

const CANCELLED: RequestPermissionResponse = { outcome: { outcome: "cancelled" } };

export class AcpHarness extends CliHarness<Connection> {
  private readonly mapper: AcpUpdateMapper;
  /** While session/load replays the history as updates: those are the log's already, and are dropped. */
  private replaying = false;
  /** The text of the last turn's last message: what a checkpoint waits to see in the agent's session file. */
  private lastText: string | undefined;
  /** When the last session/update came: to see a replay that goes on after session/load has answered end. */
  private lastUpdateAt = 0;
  /** A process stopped on purpose (restartAfterCancel): the next one starts once it is gone. */
  private retiring: Promise<void> | undefined;
  /** The session Brain drives, once session/new or load named it: others' updates (even before) are dropped. */
  private sessionId: string | undefined;
  /** Bound mode: the session's tool endpoint, once started (at the first connect). */
  private endpointServer: StdioServerSpec | undefined;

  private constructor(
    ctx: CliContext,
    private readonly profile: AcpProfile,
    private readonly mcpServers: AcpMcpServer[],
  ) {
    super(ctx);
    this.mapper = new AcpUpdateMapper(profile);
  }

  static open(opening: CliOpening, profile: AcpProfile): AcpHarness {
    const ctx = prepareCli(opening, STATE_FILE);
    const agent = agentContext(ctx);
    profile.check?.(agent);
    const servers = acpMcpServers(opening.family.harness, opening.options.mcpServers ?? {}, process.env);
    const harness = new AcpHarness(ctx, profile, servers.servers);
    for (const problem of servers.warnings) harness.warn(problem);
    return harness;
  }

  protected async send(connection: Connection, text: string): Promise<void> {
    const running = this.turn.current;
    if (!running) return;
    // Interrupted while the agent was still starting: the prompt never goes out.
    if (running.interrupted) return this.endTurn({ outcome: "aborted" });
    this.mapper.begin();
    let response: Awaited<ReturnType<typeof prompt>>;
    const prompt = () =>
      connection.acp.agent.request(methods.agent.session.prompt, {
        sessionId: connection.sessionId,
        prompt: [{ type: "text", text }],
      });
    try {
      response = await prompt();
    } catch (err) {
      if (this.turn.current !== running) return;
      for (const event of this.mapper.end("failed", undefined)) this.emitEvent(event);
      throw this.promptError(err, connection.child);
    }
    if (this.turn.current !== running) return;
    for (const event of this.mapper.end(response.stopReason, response)) {
      if (event.type === "assistant.message") this.lastText = event.data.text;
      this.emitEvent(event);
    }
    const cancelled = response.stopReason === "cancelled";
    if (cancelled && this.profile.restartAfterCancel) this.retire(connection);
    // An agent may end a turn as cancelled on its own (codex-acp does when a command is denied): that turn
    // completed, and only one Brain interrupted is `interrupted`.
    this.endTurn({ outcome: cancelled && running.interrupted ? "aborted" : "completed" });
  }

  protected abort(connection: Connection | undefined): void {
    if (!connection) return;
    connection.acp.agent
      .notify(methods.agent.session.cancel, { sessionId: connection.sessionId })
      .catch(() => {});
  }

  override async checkpoint(): Promise<NativeFile[]> {
    // A process stopped after an interrupt may still be writing its session file: it is listed once gone.
    await this.retiring;
    await this.sessionWritten();
    return super.checkpoint();
  }

  /** Waits (a while) for an agent that writes its session file after answering the prompt (AcpProfile.written). */
  private async sessionWritten(): Promise<void> {
    const { written } = this.profile;
    const lastText = this.lastText;
    const state = written && lastText ? await this.readState<AcpState>() : undefined;
    if (!written || !lastText || !state) return;
    const child = this.connection?.child;
    const deadline = Date.now() + WRITE_WAIT_MS;
    for (;;) {
      // Checked before the read: an agent that has exited has written all it ever will.
      const gone = !child?.alive;
      if (await written(agentContext(this.ctx), state.session_id, lastText)) return;
      if (gone || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.warn(`its session file did not record the last turn's answer within ${WRITE_WAIT_MS} ms`);
  }

  protected async nativeFiles(): Promise<NativeFile[]> {
    return (await this.profile.files?.(this.options.dir)) ?? [];
  }

  /**
   * A preset's agent keeps its sessions in the native dir (its home is there): the last answered prompt must
   * be in the files that hold them, else session/load would find nothing and the agent would start over. An
   * agent without a preset keeps them where it likes, so there is nothing Brain can read.
   */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    if (!this.profile.files) return undefined;
    const dir = this.options.dir;
    const files = (await this.profile.files(dir)).map((f) => join(dir, f.path));
    return missingHistory("the agent's saved session", dir, files, expected);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.retiring;
  }

  /** A process this harness stopped on purpose is not a lost one: its exit fails no turn. */
  protected override lost(
    child: CliProcess | undefined,
    err: HarnessError,
    also?: (err: HarnessError) => void,
  ): void {
    if (child?.stopRequested && this.connection?.child !== child) return also?.(err);
    // What the agent began in the turn (a call it never finished, text it never closed) ends in that turn: left in
    // the mapper, the next turn, on a new process, logged it as its own.
    if (child && this.connection?.child === child) {
      for (const event of this.mapper.end("failed", undefined)) this.emitEvent(event);
    }
    super.lost(child, err, also);
  }

  protected override isEndpointTool(name: string): boolean {
    return this.profile.endpointTool?.(name) ?? false;
  }

  /** The agent's context; in bound mode with the endpoint, started here (opening stays passive). */
  private async boundContext(): Promise<AcpAgentContext> {
    if (this.ctx.bound && !this.endpointServer) this.endpointServer = (await this.toolEndpoint()).server;
    return agentContext(this.ctx, this.endpointServer);
  }

  protected async connect(): Promise<Connection> {
    await this.retiring;
    const agent = await this.boundContext();
    const services = { provider: this.provider.bind(this) };
    const env = this.environment((await this.profile.prepare?.(agent, services)) ?? {});
    const args = [...(this.profile.args?.(agent) ?? []), ...(this.ctx.session.args ?? [])];
    let input!: ReadableStreamDefaultController<AnyMessage>;
    const readable = new ReadableStream<AnyMessage>({
      start: (controller) => {
        input = controller;
      },
    });
    const child = this.spawn(
      args,
      env,
      (message) => input.enqueue(message as AnyMessage),
      (err) => {
        try {
          input.error(err);
        } catch {}
      },
    );
    const writable = new WritableStream<AnyMessage>({
      write: (message) => child.write(`${JSON.stringify(message)}\n`),
    });
    const acp = client({ name: "brain" })
      .onNotification(methods.client.session.update, ({ params }) => {
        this.onUpdate(params);
        // The SDK handles a message after the chunk it came in was checked: its events count once appended.
        queueMicrotask(child.checkBacklog);
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => this.onPermission(params))
      .connect({ readable, writable });
    try {
      const init = await this.within(
        acp.agent.request(methods.agent.initialize, {
          protocolVersion: PROTOCOL_VERSION,
          // Brain serves no files or terminals: the agent uses its own.
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
          clientInfo: { name: "brain", title: "Brain", version: "0.1.0" },
        }),
        "initialize",
      );
      refuseOtherVersion(this.label, init.protocolVersion);
      const sessionId = await this.openSession(acp, init.agentCapabilities?.loadSession === true, agent);
      return { child, acp, sessionId, stop: () => child.stop() };
    } catch (err) {
      child.kill("SIGKILL");
      acp.close();
      if (err instanceof HarnessError) throw err;
      throw new HarnessError("brain_error", withTail(`${this.label}: ${messageOf(err)}`, child));
    }
  }

  /** Loads the session this native dir holds, in the current working directory; else starts one. */
  private async openSession(
    acp: ClientConnection,
    canLoad: boolean,
    agent: AcpAgentContext,
  ): Promise<string> {
    this.sessionId = undefined;
    const state = await this.readState<AcpState>();
    const meta = this.profile.sessionMeta?.(agent);
    const common: NewSessionRequest = {
      cwd: this.ctx.cwd,
      // Bound: the endpoint alone (it serves the session's MCP servers' tools too, under Brain's policy).
      mcpServers: agent.endpoint ? [acpStdioServer(agent.endpoint)] : this.mcpServers,
      ...(meta ? { _meta: meta } : {}),
    };
    const saved = state?.session_id;
    if (saved && !canLoad) {
      this.warn(`the agent cannot load sessions (no loadSession capability); session ${saved} starts over`);
    } else if (saved && !(await (this.profile.place?.(agent, saved) ?? true))) {
      this.warn(`session ${saved} had no saved history; started a new session`);
    } else if (saved) {
      this.replaying = true;
      try {
        await this.within(
          acp.agent.request(methods.agent.session.load, { sessionId: saved, ...common }),
          "session/load",
        );
        this.sessionId = saved;
        if (this.profile.replayTrailsLoad) await this.replayEnds();
        return saved;
      } catch (err) {
        if (err instanceof HarnessError) throw err;
        this.warn(`could not load session ${saved} (${messageOf(err)}); started a new session`);
      } finally {
        this.replaying = false;
      }
    }
    const created = await this.within(acp.agent.request(methods.agent.session.new, common), "session/new");
    this.sessionId = created.sessionId;
    await this.writeState({ session_id: created.sessionId } satisfies AcpState);
    return created.sessionId;
  }

  /** Resolves once no update has come for REPLAY_QUIET_MS (at most REPLAY_MAX_MS): the replay is over. */
  private replayEnds(): Promise<void> {
    return new Promise((resolve) => {
      const started = Date.now();
      const check = () => {
        const quiet = Date.now() - this.lastUpdateAt;
        if (quiet >= REPLAY_QUIET_MS || Date.now() - started >= REPLAY_MAX_MS) return resolve();
        setTimeout(check, REPLAY_QUIET_MS - quiet);
      };
      check();
    });
  }

  private onUpdate(params: SessionNotification): void {
    this.lastUpdateAt = Date.now();
    if (this.replaying || params.sessionId !== this.sessionId) return;
    for (const event of this.mapper.handle(params.update)) this.emitEvent(event);
  }

  private async onPermission(params: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const running = this.turn.current;
    // Another session's request is not this one's to log, nor its policy's and clients' to allow.
    if (!running || this.replaying || params.sessionId !== this.connection?.sessionId) return CANCELLED;
    // After Brain cancelled the turn, ACP's client answers "cancelled" unasked: logged, clients were asked in vain.
    if (running.interrupted) return CANCELLED;
    const { events, use } = this.mapper.toolFor(params.toolCall);
    for (const event of events) this.emitEvent(event);
    // The endpoint asks Brain's policy about each call of its tools itself: asking here too would ask twice.
    if (this.ctx.bound && this.isEndpointTool(use.name))
      return choose(params, ["allow_once", "allow_always"]);
    const judged = policyUse(use.name, this.options.mcpServers ?? {}, this.options.policy);
    if (judged.refused) {
      this.warn(judged.refused);
      return choose(params, ["reject_once", "reject_always"]);
    }
    const verdict = await this.permit({ tool: judged.tool, arguments: use.arguments, tool_call_id: use.id });
    if (running.interrupted || this.turn.current !== running) return CANCELLED;
    return choose(params, answerKinds(verdict.decision, this.options.policy?.(judged.tool) ?? "allow"));
  }

  /** Stops a process that must not serve another turn; the next prompt starts a fresh one. */
  private retire(connection: Connection): void {
    if (this.connection === connection) this.connection = undefined;
    this.retiring = connection.child.stop().finally(() => connection.acp.close());
  }

  /** The agent failed session/prompt: the model's side when it says so (an HTTP status), else Brain's. */
  private promptError(err: unknown, child: CliProcess): HarnessError {
    if (err instanceof HarnessError) return err;
    const message = messageOf(err);
    const data = err instanceof RequestError ? err.data : undefined;
    const provider =
      this.profile.providerFailure?.(data, message) ??
      /\b(API Error|status code|[45]\d\d\b|rate.?limit|overloaded|quota)/i.test(message);
    const text = `${this.label}: the agent failed the turn: ${message}`;
    return new HarnessError(
      provider ? "provider_error" : "brain_error",
      provider ? text : withTail(text, child),
    );
  }

  private within<T>(request: Promise<T>, what: string): Promise<T> {
    const ms = this.ctx.timeouts.startMs;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new HarnessError("brain_error", `${this.label}: ${what} got no answer within ${ms} ms`)),
        ms,
      );
    });
    return Promise.race([request, late]).finally(() => clearTimeout(timer));
  }
}

/** ACP's stdio server: its environment as name/value pairs. */
function acpStdioServer(server: StdioServerSpec): AcpMcpServer {
  const env = Object.entries(server.env).map(([name, value]) => ({ name, value }));
  return { name: server.name, command: server.command, args: server.args, env };
}

/** The first option of these kinds, in order. */
function choose(params: RequestPermissionRequest, kinds: string[]): RequestPermissionResponse {
  for (const kind of kinds) {
    const option = params.options.find((o) => o.kind === kind);
    if (option) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  // No option says no (or yes): cancelling the request is the one answer every agent takes as "do not run".
  return CANCELLED;
}

function messageOf(err: unknown): string {
  if (err instanceof RequestError) {
    const data = err.data as { details?: unknown; message?: unknown } | undefined;
    const detail = [data?.details, data?.message, ""].find((d): d is string => typeof d === "string");
    return detail && detail !== err.message ? `${err.message}: ${detail}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
