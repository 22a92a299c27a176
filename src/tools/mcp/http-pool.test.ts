// An MCP server over HTTP has connections of its own: a call's answer may be silent for as long as
// call_timeout_ms allows, not only as long as fetch's shared pool waits (300 s by default, shortened here to
// stand for it), and closing the server closes its connections. A real HTTP server on 127.0.0.1 answers as a
// streamable-HTTP MCP server.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolServiceEvent } from "../tool-service.js";
import { McpServerService } from "./server.js";

vi.setConfig({ testTimeout: 60_000 });

const servers: Server[] = [];
const shared = getGlobalDispatcher();
afterEach(async () => {
  setGlobalDispatcher(shared);
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

/**
 * A server whose one tool answers once `answer` resolves (unless `answer` destroyed the response); it keeps idle
 * connections open for minutes, or (`keepAlive` false) closes each after its answer.
 */
async function mcpServer(
  answer: (res: ServerResponse) => Promise<void>,
  keepAlive = true,
): Promise<{ url: string; open: Set<Socket>; server: Server }> {
  const open = new Set<Socket>();
  const server = createServer(async (req, res) => {
    res.shouldKeepAlive = keepAlive;
    // No stream of the server's own: the client's GET for one is refused as MCP allows.
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    for await (const chunk of req) body += chunk;
    const message = JSON.parse(body) as { id?: number; method: string; params: { protocolVersion?: string } };
    if (message.id === undefined) return void res.writeHead(202).end();
    const reply = (result: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    };
    if (message.method === "initialize")
      return reply({
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "slow", version: "1" },
      });
    if (message.method === "tools/list")
      return reply({ tools: [{ name: "t", inputSchema: { type: "object" } }] });
    await answer(res);
    if (res.destroyed) return;
    reply({ content: [{ type: "text", text: "done at last" }] });
  });
  server.keepAliveTimeout = 600_000;
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, open, server };
}

function service(url: string, events: ToolServiceEvent[] = []): McpServerService {
  return new McpServerService(
    {
      name: "slow",
      config: { url, call_timeout_ms: 50_000 },
      baseDir: process.cwd(),
      env: {},
    },
    (event) => events.push(event),
    [],
  );
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe("an HTTP MCP server's connections", () => {
  it("wait for a call's answer as long as call_timeout_ms, however short fetch's shared pool's timeouts", async () => {
    const slow = await mcpServer(() => new Promise((later) => setTimeout(later, 2_000)));
    setGlobalDispatcher(new Agent({ headersTimeout: 200, bodyTimeout: 200 }));
    const mcp = service(slow.url);
    await mcp.start();
    const result = await mcp.call("slow__t", {}, new AbortController().signal);
    await mcp.close();
    expect(result).toEqual({ is_error: false, content: [{ type: "text", text: "done at last" }] });
  });

  it("close with it: none is left open for the next server on the address", async () => {
    const quick = await mcpServer(async () => {});
    const mcp = service(quick.url);
    await mcp.start();
    await mcp.call("slow__t", {}, new AbortController().signal);
    expect(quick.open.size).toBeGreaterThan(0);
    await mcp.close();
    await expect.poll(() => quick.open.size, { timeout: 20_000 }).toBe(0);
  });

  it("that drops a call: its result and the log name the cause, and say the call may have run", async () => {
    const dropping = await mcpServer(async (res) => void res.socket?.destroy());
    const events: ToolServiceEvent[] = [];
    const mcp = service(dropping.url, events);
    await mcp.start();
    const result = await mcp.call("slow__t", {}, new AbortController().signal);
    await mcp.close();
    expect(result.is_error).toBe(true);
    // Not only "fetch failed": undici's cause, which tells a dropped call from a server that is not there.
    expect(text(result)).toContain("fetch failed (UND_ERR_SOCKET: other side closed)");
    expect(text(result)).toContain("it may have run the call");
    expect(events.find((e) => e.state === "exited")?.message).toContain("UND_ERR_SOCKET");
  });

  it("that went away: a call's result says nothing answers, and that the call did not run", async () => {
    // Connections closed after each answer: the call is not sent on one the client has yet to see closed.
    const gone = await mcpServer(async () => {}, false);
    const mcp = service(gone.url);
    await mcp.start();
    await new Promise((done) => gone.server.close(done));
    const result = await mcp.call("slow__t", {}, new AbortController().signal);
    await mcp.close();
    expect(text(result)).toContain("fetch failed (ECONNREFUSED)");
    expect(text(result)).toContain("the call did not reach it");
  });
});
