// MCP servers over HTTP cannot hand Brain a message larger than stdio's limit: a JSON body or one SSE event past
// it fails its request, read no further. A real HTTP server on 127.0.0.1 answers as a streamable-HTTP MCP server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { limitedFetch, MAX_REFUSAL_BYTES } from "./http-limits.js";
import { McpServerService } from "./server.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

/** Serves `body` (written in pieces, while the client reads) with `type` at any path; returns its URL. */
async function serving(type: string, pieces: () => AsyncIterable<string>, status = 200): Promise<string> {
  const server = createServer(async (_req, res) => {
    res.writeHead(status, { "content-type": type });
    for await (const piece of pieces()) {
      if (res.destroyed) break;
      if (!res.write(piece)) await new Promise((drained) => res.once("drain", drained));
    }
    res.end();
  });
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function* repeat(piece: string, times: number, end = "") {
  for (let i = 0; i < times; i++) yield piece;
  yield end;
}

describe("limitedFetch", () => {
  it("fails a JSON body past the limit, and passes one within it", async () => {
    const fetch = limitedFetch(1000);
    const big = await serving("application/json", () => repeat("x".repeat(100), 11));
    await expect((await fetch(big)).text()).rejects.toThrow(
      /the server sent a response over .* MiB, more than Brain reads as one message/,
    );
    const small = await serving("application/json", () => repeat("x".repeat(100), 10));
    expect(await (await fetch(small)).text()).toHaveLength(1000);
  });

  it("counts an SSE stream by event: many events pass, one event past the limit fails", async () => {
    const fetch = limitedFetch(1000);
    const many = await serving("text/event-stream", () => repeat(`data: ${"y".repeat(500)}\r\n\r\n`, 50));
    expect(await (await fetch(many)).text()).toHaveLength(50 * 510);
    const long = await serving("text/event-stream", () => repeat(`data: ${"y".repeat(500)}\n`, 3, "\n"));
    await expect((await fetch(long)).text()).rejects.toThrow(/sent an event over/);
  });
});

describe("an HTTP MCP server that refuses with a body of hundreds of MiB", () => {
  it("has only its first few KiB read: its refusal's text is cut, and its failed start says so in a short message", async () => {
    // 256 MiB of refusal, read whole and put in the `failed` event's message (the session's log) without the cut.
    const url = await serving("text/plain", () => repeat("x".repeat(1 << 20), 256), 500);
    const cut = await (await limitedFetch(1000)(url)).text();
    expect(cut).toBe(`${"x".repeat(MAX_REFUSAL_BYTES)} [… cut at ${MAX_REFUSAL_BYTES} bytes]`);
    const events: { state: string; message?: string }[] = [];
    const service = new McpServerService(
      { name: "refusing", config: { url }, baseDir: process.cwd(), env: {} },
      (event) => events.push(event),
      [],
    );
    await service.start();
    await service.close();
    expect(events).toEqual([
      { service: "refusing", state: "failed", message: expect.stringContaining("cut at 4096 bytes") },
    ]);
    expect(events[0]!.message!.length).toBeLessThan(MAX_REFUSAL_BYTES + 200);
  });
});

describe("an HTTP MCP server that answers a call with a body past the limit", () => {
  it("gets an error result saying so, without Brain reading the body whole", async () => {
    // 64 MiB, read whole (and logged) without the limit.
    const piece = "x".repeat(1 << 20);
    const server = createServer(async (req, res) => {
      // No stream of the server's own: the client's GET for one is refused as MCP allows.
      if (req.method !== "POST") return void res.writeHead(405).end();
      let body = "";
      for await (const chunk of req) body += chunk;
      const message = JSON.parse(body) as {
        id?: number;
        method: string;
        params: { protocolVersion?: string };
      };
      if (message.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { "content-type": "application/json" });
      const answer = (result: unknown) => res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
      if (message.method === "initialize")
        return answer({
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "big", version: "1" },
        });
      if (message.method === "tools/list")
        return answer({ tools: [{ name: "t", inputSchema: { type: "object" } }] });
      res.write(`{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`);
      for (let i = 0; i < 64 && !res.destroyed; i++)
        if (!res.write(piece)) await new Promise((drained) => res.once("drain", drained));
      res.end(`"}]}}`);
    });
    servers.push(server);
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const service = new McpServerService({
      name: "big",
      config: { url },
      baseDir: process.cwd(),
      env: {},
    }, () => {}, []);
    await service.start();
    const result = await service.call("big__t", {}, new AbortController().signal);
    await service.close();
    expect(result).toEqual({
      is_error: true,
      content: [
        {
          type: "text",
          text:
            'MCP server "big" could not be reached for t: the server sent a response over 10 MiB, more than Brain reads as one message' +
            "; no more automatic restarts (it has answered no call since the last ones): the next call to one of its tools starts it again",
        },
      ],
    });
  });
});
