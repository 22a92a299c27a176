// The per-session tool endpoint, end to end: a harness that is an MCP client (as a CLI in `bound` mode is)
// starts the endpoint's stdio proxy and calls Brain's tools through it. Every call, good or bad, is logged as
// tool.call/tool.result and goes through the permission policy; the socket refuses anyone without the secret.
import { statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { openToolEndpoint, type ToolEndpoint } from "./endpoint.js";
import { type RunningTurnRef, sessionToolEndpoint } from "./session.js";

interface Planned {
  name: string;
  arguments: Record<string, unknown>;
}

/** A harness whose "model" calls the tools named in the prompt (a JSON list) through the endpoint. */
class McpClientFactory implements HarnessFactory {
  readonly name = "mcp-client";
  readonly supportsSteering = false;
  endpoints: ToolEndpoint[] = [];
  listed: string[] = [];

  async open(options: HarnessOptions): Promise<Harness> {
    let turn: RunningTurnRef | undefined;
    const endpoint = await sessionToolEndpoint(options, () => turn);
    this.endpoints.push(endpoint);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        ...endpoint.server,
        env: { ...endpoint.server.env, PATH: "/usr/bin:/bin" },
      }),
    );
    this.listed = (await client.listTools()).tools.map((t) => t.name);
    return {
      prompt: async (text, ctx) => {
        turn = { id: ctx.turn, signal: ctx.signal };
        for (const call of JSON.parse(text) as Planned[]) {
          const result = await client.callTool({ name: call.name, arguments: call.arguments });
          const content = result.content as { text: string }[];
          options.emit({ type: "assistant.delta", turn: ctx.turn, data: { text: `${content[0]?.text};` } });
        }
        turn = undefined;
        return { interrupted: false };
      },
      steer: async () => {},
      interrupt: async () => {},
      checkpoint: async () => [],
      close: async () => {
        await client.close();
        await endpoint.close();
      },
    };
  }
}

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

async function session(permissions?: { tools: Record<string, "allow" | "deny"> }) {
  const factory = new McpClientFactory();
  t = makeBrain({ factories: [factory] });
  const s = await t.brain.create({
    harness: "mcp-client",
    config: { tools: ["echo"] },
    ...(permissions ? { permissions } : {}),
  });
  return { s, factory };
}

describe("the session tool endpoint", () => {
  it("offers the bound tools and logs every call, one with bad arguments too", async () => {
    const { s, factory } = await session();
    const calls: Planned[] = [
      { name: "echo", arguments: { value: "hi" } },
      { name: "echo", arguments: { wrong: 1 } },
      { name: "shell", arguments: { command: "ls" } },
    ];
    const turn = await s.prompt(JSON.stringify(calls));
    expect((await turn.settled).status).toBe("completed");
    expect(factory.listed).toEqual(["echo"]);
    const all = await events(s);
    const logged = all.filter((e) => e.type === "tool.call").map((e) => e.data);
    expect(logged).toMatchObject(calls);
    const results = all.filter((e) => e.type === "tool.result").map((e) => e.data as { is_error: boolean });
    expect(results.map((r) => r.is_error)).toEqual([false, true, true]);
    expect(JSON.stringify(results[1])).toContain('invalid arguments for tool \\"echo\\"');
    expect(JSON.stringify(results[2])).toContain('tool \\"shell\\" is not bound to this session');
    const text = all
      .filter((e) => e.type === "assistant.delta")
      .map((e) => (e.data as { text: string }).text);
    expect(text[0]).toBe("hi;");
  });

  it("puts every call under the permission policy", async () => {
    const { s } = await session({ tools: { echo: "deny" } });
    const turn = await s.prompt(JSON.stringify([{ name: "echo", arguments: { value: "hi" } }]));
    await turn.settled;
    const all = await events(s);
    const result = all.find((e) => e.type === "tool.result")?.data as { is_error: boolean };
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(result)).toContain("permission to run tool");
  });

  it("closes a connection that does not start with the secret, and removes its directory on close", async () => {
    const { s, factory } = await session();
    await s.start();
    const [endpoint] = factory.endpoints;
    const socket = endpoint!.server.env.BRAIN_TOOLS_SOCKET!;
    const answer = await new Promise<string>((resolve) => {
      let got = "";
      const c = connect(socket, () => {
        c.write(`${"0".repeat(64)}\n`);
        c.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })}\n`);
      });
      c.on("data", (d) => {
        got += d.toString();
      });
      c.on("close", () => resolve(got));
    });
    expect(answer).toBe("");
    await s.close();
    const { existsSync } = await import("node:fs");
    expect(existsSync(endpoint!.dir)).toBe(false);
  });

  // Root here, as Brain is when it hands a dev container's non-root user the endpoint.
  it.runIf(process.getuid?.() === 0)(
    "hands its dir, proxy, socket and handed files to the agent's user",
    async () => {
      const user = { uid: 4321, gid: 4322 };
      const endpoint = await openToolEndpoint({
        tools: [],
        call: async () => ({ content: [], is_error: false }),
        user,
      });
      try {
        const file = join(endpoint.dir, "config.json");
        writeFileSync(file, "{}", { mode: 0o600 });
        endpoint.hand(file);
        const socket = endpoint.server.env.BRAIN_TOOLS_SOCKET!;
        const owned = [endpoint.dir, endpoint.server.args[0]!, socket, file].map((path) => {
          const { uid, gid, mode } = statSync(path);
          return { path, uid, gid, mode: mode & 0o777 };
        });
        expect(owned).toEqual([
          { path: endpoint.dir, ...user, mode: 0o700 },
          { path: endpoint.server.args[0], ...user, mode: 0o600 },
          { path: socket, ...user, mode: 0o600 },
          { path: file, ...user, mode: 0o600 },
        ]);
      } finally {
        await endpoint.close();
      }
    },
  );

  it("closes a connection that never sends its secret, whole or in part", async () => {
    const endpoint = await openToolEndpoint({
      tools: [],
      call: async () => ({ content: [], is_error: false }),
      secretWaitMs: 20,
    });
    try {
      const socket = endpoint.server.env.BRAIN_TOOLS_SOCKET!;
      const closed = (first: string) =>
        new Promise<boolean>((resolve) => {
          const c = connect(socket, () => {
            if (first) c.write(first);
          });
          c.on("error", () => {});
          c.on("close", () => resolve(true));
        });
      expect(await closed("")).toBe(true);
      expect(await closed(endpoint.server.env.BRAIN_TOOLS_SECRET!.slice(0, 10))).toBe(true);
    } finally {
      await endpoint.close();
    }
  });

  it("drops a connection whose message is past the line limit, so the agent's call fails instead of waiting", async () => {
    const endpoint = await openToolEndpoint({
      tools: [{ name: "echo", input_schema: { type: "object" } }],
      call: async () => ({ content: [{ type: "text", text: "ran" }], is_error: false }),
    });
    const agent = async () => {
      const client = new Client({ name: "test", version: "1" });
      await client.connect(
        new StdioClientTransport({
          ...endpoint.server,
          env: { ...endpoint.server.env, PATH: "/usr/bin:/bin" },
        }),
      );
      return client;
    };
    const first = await agent();
    // Over the MCP SDK's 10 MiB limit for one message on stdio.
    const huge = { text: "x".repeat(11 * 1024 * 1024) };
    await expect(first.callTool({ name: "echo", arguments: huge })).rejects.toThrow(/Connection closed/);
    const second = await agent();
    expect(await second.callTool({ name: "echo", arguments: {} })).toMatchObject({
      content: [{ text: "ran" }],
    });
    await Promise.all([first.close(), second.close()]);
    await endpoint.close();
  });

  it("cuts off an agent that calls without reading the answers, instead of holding them all", async () => {
    let calls = 0;
    const endpoint = await openToolEndpoint({
      tools: [{ name: "big", input_schema: { type: "object" } }],
      call: async () => {
        calls++;
        return { content: [{ type: "text", text: "x".repeat(2 ** 20) }], is_error: false };
      },
    });
    const rpc = (id: number, method: string, params: object) =>
      `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
    const c = connect(endpoint.server.env.BRAIN_TOOLS_SOCKET!, () => {
      c.write(`${endpoint.server.env.BRAIN_TOOLS_SECRET}\n`);
      const info = {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      };
      c.write(rpc(0, "initialize", info));
      for (let id = 1; id <= 100; id++) c.write(rpc(id, "tools/call", { name: "big", arguments: {} }));
    });
    c.pause(); // reads no answer until every call has run and its answer was handed to the socket
    c.on("error", () => {});
    await expect.poll(() => calls).toBe(100);
    // Now it reads: all 101 answers if Brain held them, or what was sent before Brain cut it off.
    const seen = await new Promise<{ answers: number; closed: boolean }>((resolve) => {
      let text = "";
      c.on("data", (chunk) => {
        text += chunk.toString();
        const answers = text.split("\n").length - 1;
        if (answers === 101) resolve({ answers, closed: false });
      });
      c.on("close", () => resolve({ answers: text.split("\n").length - 1, closed: true }));
      c.resume();
    });
    expect(seen.closed).toBe(true);
    expect(seen.answers).toBeLessThan(101);
    c.destroy();
    await endpoint.close();
  });
});
