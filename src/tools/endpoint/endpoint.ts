// A session's bound tools served as one MCP server, for harnesses that speak MCP (the CLI agents in `bound`
// mode, ACP agents). The harness is handed a stdio server spec: a tiny proxy script that connects to a Unix socket
// in a private directory (mode 0700) and proves itself with a per-endpoint secret before any MCP message. A Unix
// socket, not loopback TCP: a CLI in its own network namespace (`unshare -n`, a sandbox launcher) shares the
// file system but not the host's loopback. Every call goes to `call`, which for a session is the same path a
// runner's reverse `tool.call` takes: logged, argument-checked, under the permission policy, logged result.
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { chmodSync, lchownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ContainerUser } from "../../core/harness.js";
import type { ToolCallParams, ToolResult, ToolSchema } from "../../protocol/runner.js";
import { UNREAD_INPUT_LIMITS } from "../../protocol/unread-input.js";
import { limitUnreadInput } from "../mcp/unread-limit.js";
import { textResult } from "../tool-service.js";
import { ENDPOINT_SERVER_NAME } from "./name.js";
import { PROXY_SOURCE } from "./proxy.js";

export { ENDPOINT_SERVER_NAME } from "./name.js";

/** How a harness starts the endpoint's stdio side: the common shape of every MCP client's stdio config. */
export interface StdioServerSpec {
  name: string;
  command: string;
  args: string[];
  /** Holds the socket path and the secret: put it only in files under `dir` or in the child's environment. */
  env: Record<string, string>;
}

export interface ToolEndpointOptions {
  /** The tools offered, by their Brain names. */
  tools: ToolSchema[];
  /**
   * Runs one call. The id is made up here (MCP calls carry none). `signal` is aborted when the MCP client
   * cancels the request or its connection goes away.
   */
  call(call: ToolCallParams, signal: AbortSignal): Promise<ToolResult>;
  /** Default ENDPOINT_SERVER_NAME. */
  name?: string;
  /** The node binary that runs the proxy; default this process's. */
  node?: string;
  /** Where the endpoint's private directory is made (one a container mounts); default the temp dir. */
  parent?: string;
  /** How long a connection may take to send the secret before it is closed; default SECRET_WAIT_MS. */
  secretWaitMs?: number;
  /** The user the agent runs as, when not this process's: the endpoint's files are handed to it (see `hand`). */
  user?: ContainerUser | undefined;
}

/**
 * The proxy sends the secret as it connects: a connection still without it after this long is not one of ours
 * (or is stuck), and kept open it would hold a file descriptor for as long as the session lives.
 */
export const SECRET_WAIT_MS = 10_000;

export interface ToolEndpoint {
  /** The stdio server to hand a harness (Claude's `--mcp-config`, Codex's `mcp_servers`, ACP's `session/new`). */
  readonly server: StdioServerSpec;
  /** A private directory (0700) for config files that hold the secret; removed on close. */
  readonly dir: string;
  /**
   * Gives a file or directory Brain made in `dir` to the user the agent runs as, when that is not Brain's (a
   * container's non-root user): still private, but to that user, who must read it. Without `user`, nothing.
   */
  hand(path: string): void;
  close(): Promise<void>;
}

/** Starts an endpoint; close it when the harness closes. */
export async function openToolEndpoint(options: ToolEndpointOptions): Promise<ToolEndpoint> {
  const dir = mkdtempSync(join(options.parent ?? tmpdir(), "brain-tools-"));
  chmodSync(dir, 0o700);
  const { user } = options;
  // lchown: the agent may write in the dir once it is its own, and a link it plants there is changed, not followed.
  const hand = (path: string) => user && lchownSync(path, user.uid, user.gid);
  hand(dir);
  const socketPath = join(dir, "tools.sock");
  const proxy = join(dir, "proxy.cjs");
  writeFileSync(proxy, PROXY_SOURCE, { mode: 0o600 });
  hand(proxy);
  const secret = randomBytes(32).toString("hex");
  const sockets = new Set<Socket>();
  const net: NetServer = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    authenticate(socket, secret, options.secretWaitMs ?? SECRET_WAIT_MS, () => serve(socket, options));
  });
  await new Promise<void>((resolve, reject) => {
    net.once("error", reject);
    net.listen(socketPath, () => {
      net.off("error", reject);
      resolve();
    });
  });
  // Connectable by its owner only: Brain, or the agent's user it is handed to.
  chmodSync(socketPath, 0o600);
  hand(socketPath);
  const name = options.name ?? ENDPOINT_SERVER_NAME;
  return {
    dir,
    hand: (path) => void hand(path),
    server: {
      name,
      command: options.node ?? process.execPath,
      args: [proxy],
      env: { BRAIN_TOOLS_SOCKET: socketPath, BRAIN_TOOLS_SECRET: secret },
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => net.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The first line must be the secret, within `waitMs`; anything else closes the connection before MCP sees a byte.
 */
function authenticate(socket: Socket, secret: string, waitMs: number, then: () => void): void {
  let head = Buffer.alloc(0);
  const expected = Buffer.from(secret);
  const deadline = setTimeout(() => socket.destroy(), waitMs);
  socket.once("close", () => clearTimeout(deadline));
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const newline = head.indexOf(0x0a);
    if (newline < 0) {
      if (head.length > expected.length + 1) socket.destroy();
      return;
    }
    socket.off("data", onData);
    clearTimeout(deadline);
    socket.pause();
    const given = head.subarray(0, newline);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      socket.destroy();
      return;
    }
    const rest = head.subarray(newline + 1);
    if (rest.length > 0) socket.unshift(rest);
    then();
  };
  socket.on("data", onData);
}

function serve(socket: Socket, options: ToolEndpointOptions): void {
  const server = new Server({ name: "brain", version: "0.1.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: options.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      inputSchema: { type: "object" as const, ...tool.input_schema },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    // Any arguments, even ones that do not fit the tool's schema, reach Brain's log: its check says what is wrong.
    const call: ToolCallParams = {
      id: `mcp-${randomUUID()}`,
      name: request.params.name,
      arguments: request.params.arguments ?? {},
    };
    let result: ToolResult;
    try {
      result = await options.call(call, extra.signal);
    } catch (err) {
      result = textResult(`tool "${call.name}" failed: ${(err as Error).message}`, true);
    }
    return { content: result.content, isError: result.is_error };
  });
  const transport = new StdioServerTransport(socket, socket);
  // An agent that calls without reading the answers would have them pile up here: it is cut off instead.
  limitUnreadInput(transport, UNREAD_INPUT_LIMITS, () => socket.destroy());
  socket.on("close", () => void server.close().catch(() => {}));
  // The transport gives up by itself on a message past its 10 MiB line limit, and then only stops reading: the
  // socket must go too, or the agent's calls on it wait for answers that never come.
  server.onclose = () => socket.destroy();
  // Paused while the secret was read; a `data` listener alone does not resume an explicitly paused stream.
  void server.connect(transport).then(
    () => socket.resume(),
    () => socket.destroy(),
  );
}
