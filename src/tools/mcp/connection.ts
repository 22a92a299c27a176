// One live connection to one MCP server, on the official client: a child process on stdio, or streamable HTTP
// (or the older SSE transport, for servers that still speak only that).
// It starts within a deadline, lists the tools, calls them, and says when it ends on its own (the server died).
import { isAbsolute, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Agent } from "undici";
import type { ExitKills } from "../../core/exit-kills.js";
import { tailOf } from "../../core/redact.js";
import { onText } from "../../core/stream-text.js";
import type { McpServer } from "../../protocol/config.js";
import { UNREAD_INPUT_LIMITS } from "../../protocol/unread-input.js";
import type { McpCallResult } from "./content.js";
import { expandRecord, expandVars } from "./expand.js";
import { limitedFetch } from "./http-limits.js";
import type { McpToolInfo } from "./names.js";
import { OutputSchemaChecks } from "./output-schemas.js";
import { startError } from "./start-error.js";
import { GroupStdioTransport } from "./stdio-transport.js";
import { limitUnreadInput } from "./unread-limit.js";

export interface ServerSpec {
  name: string;
  config: McpServer;
  /** Relative `cwd`s resolve against this. */
  baseDir: string;
  /** Where `${VAR}` references are looked up (the host's environment). */
  env: NodeJS.ProcessEnv;
  /** Brain's: stdio servers' groups are killed as Brain exits. */
  exits?: ExitKills;
}

/** The last few KiB a stdio server wrote on stderr: what to show when it fails. */
class StderrTail {
  private text = "";
  add(chunk: Buffer | string): void {
    this.text = tailOf(this.text + chunk.toString(), 4096);
  }
  lastLines(n = 3): string {
    return this.text.trim().split("\n").slice(-n).join(" | ");
  }
}

const CLIENT_INFO = { name: "brain", version: "0.1.0" };

/** The most tools one server may offer: more than any model is given, far less than would strain Brain. */
export const MAX_TOOLS = 4096;

export class McpConnection {
  /** Called once if the connection ends without close() (the process exited, the stream broke). */
  onLost: ((reason: string) => void) | undefined;
  /** Called when the server says its tools changed (notifications/tools/list_changed). */
  onToolsChanged: (() => void) | undefined;
  private closing = false;

  private constructor(
    private readonly client: Client,
    private readonly stderr: StderrTail | undefined,
    public tools: McpToolInfo[],
    private readonly stopped: { why?: string },
    /** An HTTP server's connections (see makeTransport), destroyed with this connection. */
    private readonly pool: Agent | undefined,
  ) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.onToolsChanged?.());
    client.onclose = () => {
      if (this.closing) return;
      this.closing = true;
      const said = this.stderr?.lastLines();
      const closed = this.stopped.why ? `Brain stopped it: ${this.stopped.why}` : "the connection closed";
      this.onLost?.(said ? `${closed}; it last said: ${said}` : closed);
    };
  }

  /** Why Brain ended the connection itself (the server broke a limit), if it did. */
  get stoppedBecause(): string | undefined {
    return this.stopped.why;
  }

  /**
   * Connects, initialises and lists the tools, or rejects with a message that says what went wrong. `stop`
   * gives up at once (the session closed): a server that hangs at initialize is not waited for.
   */
  static async open(spec: ServerSpec, timeoutMs: number, stop?: AbortSignal): Promise<McpConnection> {
    const { transport, stderr, pool, fetchFailed } = makeTransport(spec);
    const stopped: { why?: string } = {};
    if (transport instanceof GroupStdioTransport) {
      const stop = (why: string) => {
        if (stopped.why !== undefined) return;
        stopped.why = why;
        void transport.close().catch(() => {});
      };
      limitUnreadInput(transport, UNREAD_INPUT_LIMITS, stop);
      transport.onoverlong = stop;
    }
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      jsonSchemaValidator: new OutputSchemaChecks(),
    });
    let timer: NodeJS.Timeout | undefined;
    let giveUp: (() => void) | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`did not start within ${timeoutMs / 1000} s`)), timeoutMs);
      giveUp = () => reject(new Error("stopped while it started"));
      stop?.addEventListener("abort", giveUp, { once: true });
      if (stop?.aborted) giveUp();
    });
    try {
      // The deadline below is the one that speaks; the client's own request timeouts only back it up.
      const requestTimeout = { timeout: timeoutMs + 1_000 };
      const start = (async () => {
        await client.connect(transport, requestTimeout);
        return listAll(client, requestTimeout);
      })();
      start.catch(() => {});
      const tools = await Promise.race([start, deadline]);
      return new McpConnection(client, stderr, tools, stopped, pool);
    } catch (err) {
      await client.close().catch(() => {});
      await pool?.destroy().catch(() => {});
      const said = stderr?.lastLines();
      throw new Error(`${startError(spec, err, fetchFailed?.first)}${said ? `; it said: ${said}` : ""}`);
    } finally {
      clearTimeout(timer);
      if (giveUp) stop?.removeEventListener("abort", giveUp);
    }
  }

  /** Lists the server's tools afresh (after it said they changed); `timeoutMs` bounds each page. */
  async relist(timeoutMs: number, signal?: AbortSignal): Promise<McpToolInfo[]> {
    this.tools = await listAll(this.client, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
    return this.tools;
  }

  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<McpCallResult> {
    return (await this.client.callTool({ name: tool, arguments: args }, undefined, {
      signal,
      timeout: timeoutMs,
      // Long tools that report progress keep their call alive; the clock restarts at each report.
      onprogress: () => {},
      resetTimeoutOnProgress: true,
    })) as McpCallResult;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => {});
    await this.pool?.destroy().catch(() => {});
  }
}

async function listAll(
  client: Client,
  requestTimeout: { timeout: number; signal?: AbortSignal },
): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, requestTimeout);
    tools.push(...page.tools);
    cursor = page.nextCursor;
    // Pages that never end would be asked for and kept until the deadline: gigabytes at a local pace.
    if (cursor !== undefined && cursors.has(cursor))
      throw new Error(
        `its tools/list gave the cursor ${JSON.stringify(cursor).slice(0, 80)} twice: its pages do not end`,
      );
    if (tools.length > MAX_TOOLS)
      throw new Error(`its tools/list offered more than ${MAX_TOOLS} tools (its pages may not end)`);
    if (cursor !== undefined) cursors.add(cursor);
  } while (cursor);
  return tools;
}

function makeTransport(spec: ServerSpec): {
  transport: Transport;
  stderr?: StderrTail;
  pool?: Agent;
  /** An HTTP server's first failed fetch: what the SSE transport's error keeps only the text of. */
  fetchFailed?: { first?: unknown };
} {
  const { config, name, env } = spec;
  const where = `mcp_servers.${name}`;
  if (config.url !== undefined) {
    const url = new URL(expandVars(config.url, env, `${where}.url`));
    const headers = expandRecord(config.headers, env, `${where}.headers`);
    // The server's own connections, with none of fetch's default 300 s header and body timeouts: a call's answer
    // (or its SSE stream, or the server's GET stream) may be silent for longer, and call_timeout_ms is what bounds
    // it. On fetch's shared pool a call given more than 300 s failed at 300 s, and a closed connection's idle
    // sockets stayed open for the next server on the same address.
    const pool = new Agent({ bodyTimeout: 0, headersTimeout: 0 });
    const fetchFailed: { first?: unknown } = {};
    const fetch = limitedFetch(undefined, (input, init) =>
      globalThis.fetch(input, { ...init, dispatcher: pool } as RequestInit).catch((err: unknown) => {
        if ((err as Error)?.name !== "AbortError") fetchFailed.first ??= err;
        throw err;
      }),
    );
    if (config.type === "sse")
      return {
        transport: new SSEClientTransport(url, { requestInit: { headers }, fetch }),
        pool,
        fetchFailed,
      };
    return {
      transport: new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch }),
      pool,
      fetchFailed,
    };
  }
  const stderr = new StderrTail();
  const cwd = config.cwd === undefined ? spec.baseDir : resolveDir(spec.baseDir, config.cwd);
  const transport = new GroupStdioTransport({
    command: expandVars(config.command!, env, `${where}.command`),
    args: (config.args ?? []).map((arg, i) => expandVars(arg, env, `${where}.args[${i}]`)),
    // The server gets the same minimal environment MCP clients give (HOME, PATH, USER, …) plus its own env.
    env: { ...getDefaultEnvironment(), ...expandRecord(config.env, env, `${where}.env`) },
    cwd,
    ...(spec.exits ? { exits: spec.exits } : {}),
  });
  onText(transport.stderr, (text) => stderr.add(text));
  return { transport, stderr };
}

function resolveDir(base: string, dir: string): string {
  return isAbsolute(dir) ? dir : resolve(base, dir);
}
