// The CLI agent server on this host, over a stand-in harness: what goes out on the seed's wire for each Brain
// harness event, how a permission request becomes nui's HITL (through NUI_API_URL, which a stand-in nui serves
// here), and what is refused. The real CLI in its image: agent-server-docker.test.ts.
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { serveHttp } from "../../sdk/ts/nui/index.js";
import type { Harness, HarnessFactory, HarnessOptions } from "../core/harness.js";
import { HttpAgentClient, type RunBody } from "../harnesses/http/client.js";
import type { DecodedHarnessEvent } from "../protocol/nui/harness-event.js";
import { root } from "../testing/nui.js";
import { AGENT_TOKEN_ENV, CliAgentServer, familyFactory, runProvider } from "./agent-server.js";

/** A harness that reports a tool use it asks permission for, its result, and text naming its provider. */
function standIn(seen: HarnessOptions[], closed: string[] = []): HarnessFactory {
  return {
    name: "stand-in",
    supportsSteering: false,
    async open(options) {
      seen.push(options);
      const harness: Harness = {
        async prompt(text, ctx) {
          if (text === "ask") {
            const question = { question: "Your name?", options: ["Ada", "Bob"] };
            const answer = await options.ask(ctx.turn, question, ctx.signal);
            options.emit({ type: "assistant.message", turn: ctx.turn, data: { text: `answer=${answer}` } });
            return { interrupted: false };
          }
          options.emit({
            type: "tool.call",
            turn: ctx.turn,
            data: { id: "c1", name: "bash", arguments: { command: "ls" } },
          });
          const verdict = await options.permit(
            ctx.turn,
            { tool: "bash", arguments: { command: "ls" } },
            ctx.signal,
          );
          options.emit({
            type: "tool.result",
            turn: ctx.turn,
            data: {
              id: "c1",
              content: [{ type: "text", text: verdict.decision }],
              is_error: verdict.decision === "deny",
            },
          });
          options.emit({
            type: "assistant.message",
            turn: ctx.turn,
            data: { text: `${text} via ${options.provider.base_url}` },
          });
          return { interrupted: false };
        },
        steer: async () => {},
        interrupt: async () => {},
        checkpoint: async () => [{ path: "state/session.jsonl", size: 2, append_only: true }],
        verify: async (expected) =>
          expected.lastPrompt === "kept" ? undefined : `the transcript lacks ${expected.lastPrompt}`,
        close: async () => {
          closed.push(options.sessionId);
        },
      };
      return harness;
    },
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(seen: HarnessOptions[], native?: string, closed?: string[]) {
  let home = native ? join(native, "agent") : "";
  if (!native) {
    const made = mkdtempSync(join(tmpdir(), "brain-agent-test-"));
    cleanups.push(() => rmSync(made, { recursive: true, force: true }));
    home = made;
  }
  const server = new CliAgentServer(standIn(seen, closed), home, native);
  const serving = await serveHttp(server, { port: 0, host: "127.0.0.1", routes: server.routes() });
  cleanups.push(() => serving.close());
  return new HttpAgentClient(serving.url, "agent server");
}

async function run(client: HttpAgentClient, body: Record<string, unknown>) {
  const out: unknown[] = [];
  const ending = await client.run(
    { message: "hi", runId: `run-${randomUUID()}`, ...body } as RunBody,
    new AbortController().signal,
    (d: DecodedHarnessEvent) => out.push(d.ok ? d.event : d.reason),
  );
  return { ending, out };
}

/**
 * A stand-in for nui's HITL REST API that answers every request with `status` ("broken": every request fails with
 * 500), at a URL whose path is `secret`.
 */
async function hitlApi(
  status: string,
  secret = "",
  answers: Record<string, unknown> = { "Your name?": "Ada" },
): Promise<string[]> {
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.setHeader("content-type", "application/json");
    if (status === "broken") {
      res.statusCode = 500;
      return res.end(JSON.stringify({ error: "down" }));
    }
    res.end(
      JSON.stringify(req.method === "POST" ? { requestId: "h1" } : { requestId: "h1", status, answers }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const before = process.env.NUI_API_URL;
  process.env.NUI_API_URL = `http://127.0.0.1:${port}${secret ? `/${secret}` : ""}`;
  cleanups.push(() => {
    if (before === undefined) delete process.env.NUI_API_URL;
    else process.env.NUI_API_URL = before;
    server.close();
  });
  return asked;
}

describe("the CLI agent server", () => {
  it("sends the harness's events as the seed's, asks permission through nui's HITL, and names its session in done", async () => {
    const asked = await hitlApi("answered");
    const seen: HarnessOptions[] = [];
    const client = await serve(seen);
    const { ending, out } = await run(client, {
      runId: "r1",
      model: "m1",
      env: { BRAIN_PROVIDER_BASE_URL: "http://127.0.0.1:1/v1", BRAIN_PROVIDER_API_KEY: "k" },
    });
    expect(ending).toBe("done");
    expect(out).toEqual([
      { type: "tool_call", toolCallId: "c1", name: "bash", args: { command: "ls" } },
      expect.objectContaining({ type: "hitl_request", requestId: "h1", kind: "approval" }),
      { type: "tool_result", toolCallId: "c1", content: "allow", isError: false },
      { type: "text", content: "hi via http://127.0.0.1:1/v1" },
      { type: "done", sessionId: expect.stringMatching(/^agent-/) },
    ]);
    expect(asked).toEqual(["POST /api/hitl/requests", "GET /api/hitl/requests/h1/wait"]);
    expect(seen[0]).toMatchObject({
      config: { model: "m1" },
      provider: { base_url: "http://127.0.0.1:1/v1", api_key: "k" },
    });
    // The session id in done brings the next run back to the same harness.
    const sessionId = (out.at(-1) as { sessionId: string }).sessionId;
    expect((await run(client, { sessionId })).ending).toBe("done");
    expect(seen).toHaveLength(1);
  });

  it("a question the CLI asks goes out as nui's HITL question, with its options; the answer comes back", async () => {
    const asked = await hitlApi("answered");
    const { out } = await run(await serve([]), { message: "ask" });
    expect(out).toContainEqual(
      expect.objectContaining({
        type: "hitl_request",
        kind: "question",
        payload: expect.objectContaining({
          questions: [{ question: "Your name?", options: [{ label: "Ada" }, { label: "Bob" }] }],
        }),
      }),
    );
    expect(out).toContainEqual({ type: "text", content: "answer=Ada" });
    expect(asked).toHaveLength(2);
  });

  it("a declined permission denies the tool; without NUI_API_URL nobody can answer, so it is denied too", async () => {
    await hitlApi("declined");
    const client = await serve([]);
    expect((await run(client, {})).out).toContainEqual({
      type: "tool_result",
      toolCallId: "c1",
      content: "deny",
      isError: true,
    });
    delete process.env.NUI_API_URL;
    const { out } = await run(client, {});
    expect(out.some((e) => (e as { type: string }).type === "hitl_request")).toBe(false);
    expect(out).toContainEqual({ type: "tool_result", toolCallId: "c1", content: "deny", isError: true });
  });

  it("an approval answered with answers that say no denies the tool, as Brain reads nui's envelope", async () => {
    for (const answers of [{ approved: false }, { decision: "deny" }, { approved: "no" }]) {
      await hitlApi("answered", "", answers);
      const { out } = await run(await serve([]), {});
      expect(out, JSON.stringify(answers)).toContainEqual({
        type: "tool_result",
        toolCallId: "c1",
        content: "deny",
        isError: true,
      });
    }
    await hitlApi("answered", "", { approved: true, decision: "allow" });
    expect((await run(await serve([]), {})).out).toContainEqual({
      type: "tool_result",
      toolCallId: "c1",
      content: "allow",
      isError: false,
    });
  });

  it("a question nobody answered gets no answer, not the reason nui gave for it", async () => {
    const unanswered: [string, Record<string, unknown>][] = [
      ["cancelled", { reason: "the turn was interrupted" }],
      ["expired", { reason: "no client answered within 60 s" }],
      ["declined", { message: "not now" }],
    ];
    for (const [status, answers] of unanswered) {
      await hitlApi(status, "", answers);
      const { out } = await run(await serve([]), { message: "ask" });
      expect(out, status).toContainEqual({ type: "text", content: "answer=" });
    }
  });

  it("BRAIN_AGENT_TOOLS on the server answers every permission itself; a bad value fails the run saying why", async () => {
    const asked = await hitlApi("declined");
    const client = await serve([]);
    process.env.BRAIN_AGENT_TOOLS = "allow";
    cleanups.push(() => {
      delete process.env.BRAIN_AGENT_TOOLS;
    });
    expect((await run(client, {})).out).toContainEqual({
      type: "tool_result",
      toolCallId: "c1",
      content: "allow",
      isError: false,
    });
    expect(asked).toEqual([]);
    process.env.BRAIN_AGENT_TOOLS = "maybe";
    const { ending, out } = await run(client, {});
    expect(ending).toBe("error");
    expect(out).toContainEqual({
      type: "error",
      error: expect.stringMatching(/BRAIN_AGENT_TOOLS must be "allow" or "deny"/),
    });
  });

  it("passes a long prompt on as sent, its multi-byte characters whole wherever the body's chunks split", async () => {
    // About 400 KB: the body comes in many chunks, and two-byte characters straddle their edges.
    const message = "é".repeat(200_000);
    const { ending, out } = await run(await serve([]), { message });
    expect(ending).toBe("done");
    const text = out
      .filter((e): e is { type: "text"; content: string } => (e as { type: string }).type === "text")
      .map((e) => e.content)
      .join("");
    expect(text.includes("\uFFFD")).toBe(false);
    expect(text).toBe(`${message} via undefined`);
  });

  it("the provider comes from the run's env before the server's; an unknown family is refused with the known ones", () => {
    expect(
      runProvider(
        { BRAIN_PROVIDER_API_KEY: "run" },
        { BRAIN_PROVIDER_API_KEY: "own", BRAIN_PROVIDER_API: "openai" },
      ),
    ).toEqual({
      api_key: "run",
      api: "openai",
    });
    expect(familyFactory("pi-cli").name).toBe("pi-cli");
    expect(() => familyFactory("nope")).toThrow(
      /unknown CLI family "nope"; this server drives one of: claude-code, codex, opencode, pi-cli/,
    );
  });
  it("a HITL request that fails ends the run with an error that names NUI_API_URL, never its secret", async () => {
    const secret = "s3cr3t-token-of-this-session";
    await hitlApi("broken", secret);
    const { ending, out } = await run(await serve([]), {});
    expect(ending).toBe("error");
    const error = out.find((e) => (e as { type: string }).type === "error") as { error: string };
    expect(error.error).toMatch(/HITL POST NUI_API_URL\/api\/hitl\/requests failed \(500\)/);
    expect(JSON.stringify(out)).not.toContain(secret);
  });
});

describe("the CLI's state in the mounted native dir", () => {
  function nativeDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "brain-agent-native-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  it("/checkpoint lists the family's files relative to the native dir, /verify asks the family; both between runs", async () => {
    const native = nativeDir();
    const closed: string[] = [];
    const client = await serve([], native, closed);
    expect((await client.info(2_000)).capabilities).toEqual([
      "run",
      "cancel",
      "shutdown",
      "checkpoint",
      "verify",
    ]);
    const sessionId = ((await run(client, {})).out.at(-1) as { sessionId: string }).sessionId;
    expect(await client.call("/checkpoint", { sessionId }, 2_000)).toEqual({
      files: [{ path: `agent/${sessionId}/state/session.jsonl`, size: 2, append_only: true }],
    });
    expect(await client.call("/verify", { sessionId, expected: { lastPrompt: "kept" } }, 2_000)).toEqual({
      missing: null,
    });
    expect(closed).toEqual([]); // the open session's harness answered
    // A session this server has not opened (a fresh container on a restored dir): opened for the answer, closed.
    expect(
      await client.call("/verify", { sessionId: "agent-restored", expected: { lastPrompt: "gone" } }, 2_000),
    ).toEqual({ missing: "the transcript lacks gone" });
    expect(closed).toEqual(["agent-restored"]);
  });

  it("refuses a bad session id, a missing expectation, and a server whose CLI state is not in a native dir", async () => {
    const client = await serve([], nativeDir());
    await expect(client.call("/checkpoint", { sessionId: "../etc" }, 2_000)).rejects.toThrow(
      /answered 400: sessionId must be the id a run's done named/,
    );
    await expect(client.call("/verify", { sessionId: "a" }, 2_000)).rejects.toThrow(
      /POST \/verify needs \{"sessionId": "...", "expected"/,
    );
    const inContainer = await serve([]);
    expect((await inContainer.info(2_000)).capabilities).toEqual(["run", "cancel", "shutdown"]);
    await expect(inContainer.call("/checkpoint", { sessionId: "a" }, 2_000)).rejects.toThrow(
      /keeps its CLI's state inside the container: set BRAIN_NATIVE_DIR/,
    );
  });
});

describe("the agent server's program", () => {
  it("with BRAIN_AGENT_TOKEN serves only requests that carry it, on every route", async () => {
    // As the `docker` harness starts it: a published port answers every process on the host and every container
    // on Docker's network, so the token is the boundary. Without it, any of them ran prompts on the session's key.
    const token = randomUUID();
    const child = spawn(
      process.execPath,
      [join(root, "dist/src/agent-server/agent-server-main.js"), "claude-code", "0"],
      { env: { ...process.env, [AGENT_TOKEN_ENV]: token }, stdio: ["ignore", "ignore", "pipe"] },
    );
    cleanups.push(() => void child.kill("SIGKILL"));
    let stderr = "";
    const port = await new Promise<number>((resolve, reject) => {
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
        const listening = /on port (\d+)/.exec(stderr);
        if (listening) resolve(Number(listening[1]));
      });
      child.once("exit", () => reject(new Error(`agent-server-main exited: ${stderr}`)));
    });
    const url = `http://127.0.0.1:${port}`;
    const refused = [
      await fetch(`${url}/info`),
      await fetch(`${url}/info`, { headers: { authorization: `Bearer ${token}x` } }),
      // What a web page can send to a loopback port without a preflight.
      await fetch(`${url}/run`, {
        method: "POST",
        body: '{"message":"hi"}',
        headers: { "content-type": "text/plain" },
      }),
      await fetch(`${url}/checkpoint`, { method: "POST", body: "{}" }),
      await fetch(`${url}/shutdown`, { method: "POST", body: "{}" }),
    ];
    expect(refused.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    expect(await refused[0]!.json()).toEqual({ error: "this agent needs Authorization: Bearer <its token>" });
    const info = await new HttpAgentClient(url, "agent server", { token }).info(5_000);
    expect(info.name).toBe("brain-claude-code");
    expect(stderr).not.toContain(token);
  });

  it("refuses a BRAIN_AGENT_IDLE_SECONDS that is no whole number of seconds, naming it and what it takes", () => {
    const main = join(root, "dist/src/agent-server/agent-server-main.js");
    const env = { ...process.env, BRAIN_AGENT_IDLE_SECONDS: "10m" };
    const r = spawnSync(process.execPath, [main, "claude-code", "0"], {
      env,
      encoding: "utf8",
      timeout: 60_000, // the server it refused to be would serve for good
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("BRAIN_AGENT_IDLE_SECONDS takes a whole number of seconds");
    expect(r.stderr).toContain('not "10m"');
  });
});
