// An MCP server over HTTP has connections of its own: a call's answer may be silent for as long as
// call_timeout_ms allows, not only as long as fetch's shared pool waits (300 s by default, shortened here to
// stand for it), and closing the server closes its connections. A real HTTP server on 127.0.0.1 answers as a
// streamable-HTTP MCP server.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
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

/** A server whose one tool answers once `answer` resolves; it keeps idle connections open for minutes. */
async function mcpServer(answer: () => Promise<void>): Promise<{ url: string; open: Set<Socket> }> {
  const open = new Set<Socket>();
  const server = createServer(async (req, res) => {
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
    await answer();
    reply({ content: [{ type: "text", text: "done at last" }] });
  });
  server.keepAliveTimeout = 600_000;
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, open };
}

function service(url: string): McpServerService {
  return new McpServerService({
    name: "slow",
    config: { url, call_timeout_ms: 50_000 },
    baseDir: process.cwd(),
    env: {},
  }, () => {}, []);
}

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
});
