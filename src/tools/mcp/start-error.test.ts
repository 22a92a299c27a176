// An HTTP MCP server that does not start says what happened and what to check: a refusal, a reset halfway through
// the handshake, a TLS mismatch and an HTTP 500 each read differently, over both HTTP transports. Before, every
// one but the 500 said "nothing answers at URL". Real servers on 127.0.0.1 fail in each way.
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freePort } from "../../core/free-port.js";
import type { McpServer } from "../../protocol/config.js";
import type { ToolServiceEvent } from "../tool-service.js";
import { McpServerService } from "./server.js";

vi.setConfig({ testTimeout: 60_000 });

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise((closed) => server.close(closed));
  }
});

async function listening<T extends Server>(server: T): Promise<string> {
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Takes the request in, then resets the connection (RST) without a word. */
const resetting = () =>
  listening(createServer((socket) => socket.once("data", () => socket.resetAndDestroy())));

/** Answers every request with HTTP 500 and a body saying why. */
const failing = () =>
  listening(createHttpServer((_req, res) => res.writeHead(500).end("the database is down")));

/** Plain HTTP: an https:// URL for it fails in the TLS handshake. */
const plain = () => listening(createHttpServer((_req, res) => res.end("hello")));

/** The `failed` event's message of a server at `url` that does not start. */
async function startFailure(config: McpServer): Promise<string> {
  const events: ToolServiceEvent[] = [];
  const mcp = new McpServerService(
    { name: "web", config: { startup_timeout_ms: 20_000, ...config }, baseDir: process.cwd(), env: {} },
    (event) => events.push(event),
    [],
  );
  await mcp.start();
  await mcp.close();
  const failed = events.find((event) => event.state === "failed");
  expect(failed, JSON.stringify(events)).toBeDefined();
  return failed?.message ?? "";
}

for (const [type, path] of [
  [undefined, "/mcp"],
  ["sse", "/sse"],
] as const) {
  const url = (address: string, scheme = "http") => `${scheme}://${address}${path}`;
  const config = (at: string): McpServer => ({ url: at, ...(type ? { type } : {}) });

  describe(`an MCP server over ${type ?? "streamable HTTP"} that does not start`, () => {
    it("where nothing listens: says the connection was refused, and to check the server runs there", async () => {
      const at = url(`127.0.0.1:${await freePort()}`);
      const message = await startFailure(config(at));
      expect(message).toContain(`nothing listens at ${at}: the connection was refused`);
      expect(message).toContain("ECONNREFUSED");
      expect(message).toContain("is the server running");
    });

    it("that resets the connection: says it closed it before it answered, not that nothing answers", async () => {
      const at = url(await resetting());
      const message = await startFailure(config(at));
      expect(message).toContain(`${at} closed the connection before it answered Brain's initialize`);
      expect(message).toContain("ECONNRESET");
      expect(message).not.toContain("nothing");
    });

    it("that is plain HTTP at an https:// URL: says the TLS handshake failed, and to check the scheme", async () => {
      const at = url(await plain(), "https");
      const message = await startFailure(config(at));
      expect(message).toContain(`the TLS handshake with ${at} failed`);
      expect(message).toContain("ERR_SSL_");
      expect(message).toContain("check that the server speaks HTTPS");
    });

    it("that answers HTTP 500: names the status, and says its own log says why", async () => {
      const at = url(await failing());
      const message = await startFailure(config(at));
      expect(message).toContain(`${at} answered HTTP 500`);
      expect(message).toContain("its own log says why");
      // Streamable HTTP keeps the body of the refusal; the SSE transport does not read it.
      if (!type) expect(message).toContain("the database is down");
    });
  });
}
