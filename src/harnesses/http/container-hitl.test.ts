// A container's own HITL API (container-hitl.ts) on its Unix socket: only under its secret path, only its own
// session, and the same desk an extension host's requests reach; and what an agent that keeps its state in the
// native dir may list for a checkpoint (agent-state.ts).
import { existsSync, statSync } from "node:fs";
import { createServer, request } from "node:http";
import { dirname } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessOptions } from "../../core/harness.js";
import type { HitlRun } from "../nui/hitl-desk.js";
import { AgentState } from "./agent-state.js";
import { HttpAgentClient } from "./client.js";
import { CONTAINER_API_PORT, ContainerHitl } from "./container-hitl.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One HTTP request over the socket: what the container's relay carries. */
function call(socketPath: string, method: string, path: string, body?: unknown) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const req = request(
      { socketPath, method, path, headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || "{}") }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe("a container's own NUI_API_URL", () => {
  it("serves its session's desk under its secret only; the socket's dir is private and goes with close", async () => {
    const asked: unknown[] = [];
    const options = {
      sessionId: "s1",
      ask: async () => "",
      permit: async (_turn: string, use: unknown) => {
        asked.push(use);
        return { decision: "allow" as const };
      },
    } as Pick<HarnessOptions, "sessionId" | "ask" | "permit">;
    const run: HitlRun = { runId: "run-1", turn: "t1", signal: new AbortController().signal };
    const hitl = await ContainerHitl.open(options, () => run, [CONTAINER_API_PORT, 9000]);
    cleanups.push(() => hitl.close());
    expect(hitl.port).toBe(CONTAINER_API_PORT + 1);
    const url = new URL(hitl.url);
    expect(url.origin).toBe(`http://127.0.0.1:${CONTAINER_API_PORT + 1}`);
    const secret = url.pathname.slice(1);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(statSync(dirname(hitl.socket)).mode & 0o777).toBe(0o700);

    const approval = { kind: "approval", payload: { toolName: "Bash", toolInput: { command: "touch x" } } };
    for (const path of ["/api/hitl/requests", "/wrong/api/hitl/requests", `/${secret}x/api/hitl/requests`]) {
      expect(await call(hitl.socket, "POST", path, approval)).toEqual({
        status: 404,
        body: { error: "not found" },
      });
    }
    expect(asked).toEqual([]);
    const other = await call(hitl.socket, "POST", `/${secret}/api/hitl/requests`, {
      ...approval,
      sessionId: "s2",
    });
    expect(other.status).toBe(404);
    const made = await call(hitl.socket, "POST", `/${secret}/api/hitl/requests`, approval);
    expect(made).toMatchObject({ status: 200, body: { sessionId: "s1", runId: "run-1", kind: "approval" } });
    const waited = await call(hitl.socket, "GET", `/${secret}/api/hitl/requests/${made.body.requestId}/wait`);
    expect(waited.body).toMatchObject({ status: "answered", answers: { approved: true } });
    expect(asked).toEqual([{ tool: "Bash", arguments: { command: "touch x" } }]);
    // An error never echoes the secret back.
    const lost = await call(hitl.socket, "GET", `/${secret}/api/other`);
    expect(JSON.stringify(lost.body)).not.toContain(secret);

    await hitl.close();
    expect(existsSync(dirname(hitl.socket))).toBe(false);
  });
});

describe("an agent's checkpoint listing", () => {
  async function agentListing(files: unknown): Promise<AgentState> {
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ files }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as { port: number }).port;
    return new AgentState(new HttpAgentClient(`http://127.0.0.1:${port}`, "agent"));
  }

  it("keeps relative paths inside the native dir once each, and refuses any other with the reason", async () => {
    const file = { path: "agent/a1/session.jsonl", size: 3, append_only: true };
    expect(await (await agentListing([file, file])).files({ sessionId: "a1" })).toEqual([file]);
    for (const [path, why] of [
      ["../outside", /\.\." segment/],
      ["/etc/passwd", /absolute/],
      ["agent/./x", /not normalized/],
      ["nui-session.json", /Brain's own resume file/],
    ] as const) {
      const state = await agentListing([{ path, size: 1, append_only: false }]);
      await expect(state.files({ sessionId: "a1" })).rejects.toThrow(why);
    }
    await expect((await agentListing("nope")).files({})).rejects.toThrow(
      /must answer \{files: \[\{path, size, append_only\}\]\}/,
    );
  });
});
