// An HTTP/SSE agent (nui's /info, /run, /cancel, /shutdown; docs/protocol.md) that drives one CLI family the way
// Brain drives it on a host: the family's own factory from the catalog opens a harness per agent session, each
// POST /run is one prompt, and the harness's events go out as the seed's events (text, tool_call, tool_result,
// image). It runs inside the family's image (docker/agent-server.Dockerfile) behind the `docker` harness.
//
// What a real host would bake in stays out of the image: the provider's base URL and key come with each run
// (the /run body's `env`, which the `docker` harness also sets on the container), BRAIN_PROVIDER_BASE_URL,
// BRAIN_PROVIDER_API_KEY and BRAIN_PROVIDER_API. A permission the CLI asks for, or a question, goes out as
// nui's HITL (create through NUI_API_URL, a `hitl_request` event, wait for the answer); without NUI_API_URL
// nobody can answer, so the tool is denied and the question gets "". BRAIN_AGENT_TOOLS on the container answers
// every permission itself (allow or deny). The `docker` harness serves a `--network none` container a NUI_API_URL
// of that session's own (container-hitl.ts).
//
// Where the CLI keeps its state: with BRAIN_NATIVE_DIR (the Brain session's native dir, which the `docker` harness
// mounts there) each agent session's dir is <native>/agent/<id>, so the CLI's files are Brain's native files;
// POST /checkpoint lists them as the family's checkpoint does (relative to the native dir) and POST /verify asks
// the family whether they hold the conversation Brain's log says they should. Without it, a temporary dir.
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { NuiAgent, type RunContext } from "../../sdk/ts/nui/index.js";
import type {
  HarnessEvent as BrainEvent,
  ExpectedHistory,
  Harness,
  HarnessFactory,
} from "../core/harness.js";
import { builtinCatalog, catalogHarnesses } from "../harnesses/catalog.js";
import { AGENT_TOKEN_ENV as DOCKER_AGENT_TOKEN_ENV, NATIVE_DIR_ENV } from "../harnesses/http/docker.js";
import type { NativeFile, ProviderCredentials } from "../protocol/runner.js";
import { askThroughNui, permitThroughNui, toolsPolicy } from "./agent-hitl.js";

export const AGENT_PORT = 8090;

/** Set on the container by the `docker` harness: where the Brain session's native dir is mounted. */
export const NATIVE_ENV = NATIVE_DIR_ENV;

/** Set on the container by the `docker` harness: the bearer token every request to this server must carry. */
export const AGENT_TOKEN_ENV = DOCKER_AGENT_TOKEN_ENV;

/** The agent sessions' dirs: BRAIN_AGENT_HOME, else under the mounted native dir, else a temporary dir. */
function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.BRAIN_AGENT_HOME) return env.BRAIN_AGENT_HOME;
  return env[NATIVE_ENV] ? join(env[NATIVE_ENV], "agent") : join(tmpdir(), "brain-agent");
}

const SESSION_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The run-scoped variables that carry the provider; read from the run's env, then the server's own. */
export const PROVIDER_ENV = {
  base_url: "BRAIN_PROVIDER_BASE_URL",
  api_key: "BRAIN_PROVIDER_API_KEY",
  api: "BRAIN_PROVIDER_API",
} as const;

/** The family's factory as Brain builds it on a host with an empty config. */
export function familyFactory(family: string): HarnessFactory {
  const { factories } = catalogHarnesses(builtinCatalog(), {
    config: {},
    configDir: process.cwd(),
    brainHome: join(tmpdir(), "brain-agent-home"),
  });
  const found = factories.find((f) => f.name === family);
  if (!found) {
    const cli = ["claude-code", "codex", "opencode", "pi-cli"].filter((n) =>
      factories.some((f) => f.name === n),
    );
    throw new Error(`unknown CLI family "${family}"; this server drives one of: ${cli.join(", ")}`);
  }
  return found;
}

export function runProvider(
  runEnv: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): ProviderCredentials {
  const out: ProviderCredentials = {};
  for (const [field, name] of Object.entries(PROVIDER_ENV) as [keyof ProviderCredentials, string][]) {
    const value = runEnv[name] ?? env[name];
    if (value) out[field] = value;
  }
  return out;
}

/** The run that is working now in one agent session: where the harness's events and HITL go. */
interface Live {
  ctx: RunContext;
  /** Text streamed since the last assistant.message: a message that streamed nothing is sent whole. */
  streamed: boolean;
}

interface AgentSession {
  harness: Harness;
  live?: Live;
  /** A run or a between-runs request (/checkpoint, /verify) using the harness: it is not closed meanwhile. */
  using: number;
  idle?: NodeJS.Timeout;
}

/** How long a session's harness (its CLI process) stays open with nothing using it: BRAIN_AGENT_IDLE_SECONDS. */
export const IDLE_ENV = "BRAIN_AGENT_IDLE_SECONDS";
export const DEFAULT_IDLE_MS = 10 * 60_000;

/** How many runs' session ids the server keeps for getSessionId. */
export const MAX_RUN_SESSIONS = 1000;

export class CliAgentServer extends NuiAgent {
  override name: string;
  override version = "1.0.0";
  private readonly sessions = new Map<string, AgentSession>();
  /** Sessions whose harness is opening: a second request for one waits for it, never opens another on its dir. */
  private readonly opening = new Map<string, Promise<AgentSession>>();
  private readonly runSessions = new Map<string, string>();
  /** Harnesses closing (idle, or dead): the session's next harness opens on their dir once they are done. */
  private readonly closing = new Map<string, Promise<void>>();

  constructor(
    private readonly factory: HarnessFactory,
    /** Where each agent session keeps the CLI's native state. */
    private readonly home = defaultHome(),
    /** The Brain session's native dir, when mounted: /checkpoint and /verify then answer. */
    private readonly native = process.env[NATIVE_ENV] || undefined,
    /** A session's harness is closed once unused this long (0: kept open), and opened again by its next run. */
    private readonly idleMs = DEFAULT_IDLE_MS,
  ) {
    super();
    this.name = `brain-${factory.name}`;
    if (native) this.capabilities = [...this.capabilities, "checkpoint", "verify"];
  }

  /** POST /checkpoint {sessionId} and POST /verify {sessionId, expected}, for serveHttp's `routes`. */
  routes(): Record<string, (body: Record<string, unknown>) => Promise<unknown>> {
    return {
      "/checkpoint": async (body) => ({
        files: await this.between(body, (harness, dir) => this.nativeFiles(harness, dir)),
      }),
      "/verify": async (body) => {
        const expected = body.expected as ExpectedHistory | undefined;
        if (!expected || typeof expected.lastPrompt !== "string") {
          throw new Error('POST /verify needs {"sessionId": "...", "expected": {"lastPrompt": "..."}}');
        }
        const missing = await this.between(body, (harness) =>
          harness.verify ? harness.verify(expected) : Promise.resolve(undefined),
        );
        return { missing: missing ?? null };
      },
    };
  }

  async *run(message: string, runId: string, ctx: RunContext) {
    const params = ctx.params as RunContext["params"] & { env?: Record<string, string> };
    const sessionId = typeof params.sessionId === "string" && params.sessionId ? params.sessionId : "";
    const id = SESSION_ID.test(sessionId) ? sessionId : `agent-${randomUUID()}`;
    const session = await this.session(id, params);
    if (session.live) throw new Error(`session ${id} already has a run working; cancel it first`);
    const live: Live = { ctx, streamed: false };
    session.live = live;
    this.hold(session);
    this.runSessions.set(runId, id);
    // Asked for right after its run ends: the oldest runs' are dropped, or a long-lived server grew with every run.
    for (const old of this.runSessions.keys()) {
      if (this.runSessions.size <= MAX_RUN_SESSIONS) break;
      this.runSessions.delete(old);
    }
    const turn = `turn-${runId}`;
    const stop = () => void session.harness.interrupt(turn).catch(() => {});
    ctx.signal.addEventListener("abort", stop, { once: true });
    try {
      await session.harness.prompt(message, { turn, signal: ctx.signal });
    } finally {
      ctx.signal.removeEventListener("abort", stop);
      session.live = undefined;
      if (session.harness.isAlive?.() === false) await this.retire(id, session, true);
      else this.release(id, session);
    }
    yield* [];
  }

  override getSessionId(runId: string): string | undefined {
    // Asked twice per run (the SDK's done, then the HTTP server's own): kept, for the latest runs.
    return this.runSessions.get(runId);
  }

  override async onShutdown(): Promise<void> {
    const open = [...this.sessions.entries()];
    await Promise.all([...open.map(([id, s]) => this.retire(id, s, true)), ...this.closing.values()]);
  }

  private hold(session: AgentSession): void {
    clearTimeout(session.idle);
    session.using++;
  }

  private release(id: string, session: AgentSession): void {
    session.using--;
    if (session.using > 0 || this.idleMs <= 0 || this.sessions.get(id) !== session) return;
    // setTimeout takes at most 2^31-1 ms and fires at once for more.
    session.idle = setTimeout(() => void this.retire(id, session), Math.min(this.idleMs, 2 ** 31 - 1));
    // An idle session is no reason for the process to stay up.
    session.idle.unref();
  }

  /** Closes the session's harness: when idle (unless something took it up since), or at once when `now`. */
  private async retire(id: string, session: AgentSession, now = false): Promise<void> {
    clearTimeout(session.idle);
    if (this.sessions.get(id) !== session || (!now && session.using > 0)) return;
    this.sessions.delete(id);
    const closed = session.harness
      .close()
      .catch(() => {})
      .finally(() => {
        if (this.closing.get(id) === closed) this.closing.delete(id);
      });
    this.closing.set(id, closed);
    await closed;
  }

  /**
   * `use` on the harness of agent session `sessionId` between its runs: the open one, else one opened for this
   * (passive: a CLI starts at its first prompt) and closed after.
   */
  private async between<T>(
    body: Record<string, unknown>,
    use: (harness: Harness, dir: string) => Promise<T>,
  ): Promise<T> {
    const { sessionId } = body;
    if (!this.native) {
      throw new Error(
        `this agent keeps its CLI's state inside the container: set ${NATIVE_ENV} to the mounted native dir`,
      );
    }
    if (typeof sessionId !== "string" || !SESSION_ID.test(sessionId)) {
      throw new Error(
        `sessionId must be the id a run's done named (letters, digits, "-", "_"), got ${JSON.stringify(sessionId)}`,
      );
    }
    const dir = join(this.home, sessionId);
    const open = this.sessions.get(sessionId) ?? (await this.opening.get(sessionId)?.catch(() => undefined));
    if (open?.live) throw new Error(`session ${sessionId} has a run working; ask between runs`);
    if (open) {
      this.hold(open);
      try {
        return await use(open.harness, dir);
      } finally {
        this.release(sessionId, open);
      }
    }
    // The run's own settings (its working dir decides where some CLIs file a transcript), not its env.
    const { env: _env, ...params } = body;
    const session = await this.open(sessionId, params as RunContext["params"]);
    try {
      return await use(session.harness, dir);
    } finally {
      await session.harness.close().catch(() => {});
    }
  }

  /** The family's checkpoint, its paths made relative to the native dir (where Brain reads them). */
  private async nativeFiles(harness: Harness, dir: string): Promise<NativeFile[]> {
    const native = this.native!;
    return (await harness.checkpoint()).map((file) => {
      const path = relative(native, join(dir, file.path)).split(sep).join("/");
      if (path.startsWith("../") || path === "..") {
        throw new Error(`${file.path} is outside the native dir; BRAIN_AGENT_HOME must lie under ${native}`);
      }
      return { ...file, path };
    });
  }

  private async session(
    id: string,
    params: RunContext["params"] & { env?: Record<string, string> },
  ): Promise<AgentSession> {
    const open = this.sessions.get(id);
    if (open) return open;
    let opening = this.opening.get(id);
    if (!opening) {
      opening = this.open(id, params)
        .then((session) => {
          this.sessions.set(id, session);
          return session;
        })
        .finally(() => this.opening.delete(id));
      this.opening.set(id, opening);
    }
    return opening;
  }

  private async open(
    id: string,
    params: RunContext["params"] & { env?: Record<string, string> },
  ): Promise<AgentSession> {
    const dir = join(this.home, id);
    // What the CLI writes as it closes is its state: the next one reads it.
    await this.closing.get(id);
    mkdirSync(dir, { recursive: true });
    const session = { using: 0 } as AgentSession;
    const options: Record<string, unknown> = {};
    if (typeof params.workingDir === "string" && params.workingDir) options.cwd = params.workingDir;
    const tools = toolsPolicy();
    session.harness = await this.factory.open({
      sessionId: id,
      dir,
      config: {
        ...(typeof params.model === "string" && params.model ? { model: params.model } : {}),
        ...(typeof params.systemPrompt === "string" && params.systemPrompt
          ? { system_prompt: params.systemPrompt }
          : {}),
        options,
      },
      tools: [],
      provider: runProvider(params.env ?? {}),
      emit: (event) => this.forward(session.live, event),
      call: async () => ({
        content: [{ type: "text", text: "this agent server binds no tools" }],
        is_error: true,
      }),
      ...(tools ? { policy: () => tools } : {}),
      permit: (_turn, use) => permitThroughNui(session.live?.ctx, use, tools),
      ask: (_turn, question) => askThroughNui(session.live?.ctx, question),
    });
    return session;
  }

  /** One Brain harness event as the seed's event, on the run that is working. */
  private forward(live: Live | undefined, event: BrainEvent): void {
    if (!live) return;
    // Called from the CLI's output handler: an event the transport refuses (over its size) must not throw there,
    // where it would end the server and every session it holds.
    const emit: RunContext["emit"] = (out) => {
      try {
        live.ctx.emit(out);
      } catch (err) {
        process.stderr.write(`agent-server: ${(err as Error).message}\n`);
      }
    };
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case "assistant.delta":
        live.streamed = true;
        if (data.text) emit({ type: "text", content: String(data.text) });
        return;
      case "assistant.message":
        if (!live.streamed && data.text) emit({ type: "text", content: String(data.text) });
        live.streamed = false;
        return;
      case "tool.call":
        emit({
          type: "tool_call",
          toolCallId: String(data.id),
          name: String(data.name),
          args: data.arguments ?? {},
        });
        return;
      case "tool.result":
        emit({
          type: "tool_result",
          toolCallId: String(data.id),
          content: resultText(data.content),
          isError: data.is_error === true,
        });
        return;
      case "image":
        emit({ type: "image", mimeType: String(data.mime_type), data: String(data.data) });
        return;
      case "harness.warning":
        process.stderr.write(`agent-server: ${JSON.stringify(data)}\n`);
        return;
    }
  }
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined ? "" : JSON.stringify(content);
  return content
    .map((part: { type?: string; text?: string }) =>
      part?.type === "text" ? (part.text ?? "") : JSON.stringify(part),
    )
    .join("");
}
