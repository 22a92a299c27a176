// An HTTP/SSE agent's connections are its session's: they close with the session, and none is left for the
// next session (or the next agent on the same address) to find. A stand-in agent that keeps idle connections
// open for minutes, as a proxy or load balancer in front of one does, shows what each closed session leaves.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { HarnessFactory } from "../../core/harness.js";
import { makeBrain, type TestBrain } from "../../testing/brain.js";
import { nuiSessionOptions } from "../nui/session-options.js";
import { AgentState } from "./agent-state.js";
import { HttpAgentClient } from "./client.js";
import { HttpHarness } from "./http-harness.js";
import { DEFAULT_REMOTE_TIMEOUTS, RemoteFactory } from "./remote.js";

vi.setConfig({ testTimeout: 120_000 });

let t: TestBrain | undefined;
let server: Server | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/**
 * An agent that answers every run with one text and done (naming its conversation), and keeps its connections
 * open between requests. Its /verify fails.
 */
async function lingeringAgent(): Promise<{ url: string; open: Set<Socket> }> {
  const open = new Set<Socket>();
  server = createServer(async (req, res) => {
    for await (const _ of req);
    if (req.url === "/info")
      return res.end(JSON.stringify({ name: "lingering", version: "1", capabilities: {} }));
    if (req.url === "/run") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end('data: {"type":"text","content":"fine"}\n\ndata: {"type":"done","sessionId":"c1"}\n\n');
    }
    if (req.url === "/verify") return res.writeHead(500).end(JSON.stringify({ error: "verify broke" }));
    res.end(JSON.stringify({ ok: true }));
  });
  server.keepAliveTimeout = 600_000;
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open };
}

describe("an HTTP/SSE agent's connections", () => {
  it("close with the session: sessions one after another leave none open", async () => {
    const agent = await lingeringAgent();
    t = makeBrain({ factories: [new RemoteFactory()] });
    for (let i = 0; i < 4; i++) {
      const session = await t.brain.create({ harness: "remote", config: { options: { url: agent.url } } });
      expect((await (await session.prompt(`turn ${i}`)).settled).status).toBe("completed");
      await t.brain.closeSession(session.id);
      await expect.poll(() => agent.open.size, { timeout: 20_000 }).toBe(0);
    }
  });

  it("close when the session's history cannot be verified: the harness that failed to open is closed", async () => {
    const agent = await lingeringAgent();
    // An agent that keeps its conversation in the native dir (as the docker harness's CLI agent server does):
    // a reopened session asks its /verify.
    const stateful: HarnessFactory = {
      name: "stateful",
      supportsSteering: false,
      async open(options) {
        const client = new HttpAgentClient(agent.url, "stateful agent");
        const session = nuiSessionOptions({}, "stateful");
        const parts = { client, options, session, timeouts: DEFAULT_REMOTE_TIMEOUTS };
        return HttpHarness.open({ ...parts, state: new AgentState(client), release: async () => {} });
      },
    };
    t = makeBrain({ factories: [stateful] });
    const session = await t.brain.create({ harness: "stateful" });
    expect((await (await session.prompt("first")).settled).status).toBe("completed");
    await t.brain.close();
    await expect.poll(() => agent.open.size, { timeout: 20_000 }).toBe(0);
    t = makeBrain({ home: t.home, factories: [stateful] });
    const again = await (await t.brain.session(session.id)).prompt("second");
    const outcome = await again.settled;
    expect(outcome.error?.message).toMatch(/POST \S+\/verify answered 500: verify broke/);
    await expect.poll(() => agent.open.size, { timeout: 20_000 }).toBe(0);
  });
});
