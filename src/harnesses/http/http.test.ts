// The HTTP/SSE families: `remote` against the seed's minimal Python harness (verbatim) and the TypeScript
// reference server, `docker` through a fake docker CLI that runs the image's agent as a local process.

import { readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../core/free-port.js";
import { events, makeBrain, type TestBrain, tempDir, textOf, waitForEvent } from "../../testing/brain.js";
import {
  fakeDocker,
  readCalls,
  type Served,
  startSeedHarness,
  startTsHttpAgent,
  warnings,
} from "../../testing/nui.js";
import { containerLimits, limitArgs } from "./container-limits.js";
import { DockerFactory } from "./docker.js";
import { DockerCli, dockerEnvironment } from "./docker-cli.js";
import { RemoteFactory } from "./remote.js";

let t: TestBrain | undefined;
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  for (const fn of cleanups.splice(0)) await fn();
});

function remoteBrain(factory = new RemoteFactory()) {
  t = makeBrain({ factories: [factory] });
  return t.brain;
}

async function served(start: () => Promise<Served>): Promise<Served> {
  const agent = await start();
  cleanups.push(() => agent.stop());
  return agent;
}

/** An inline SSE server for protocol corner cases: `script` writes the response. */
async function sseServer(
  script: (res: import("node:http").ServerResponse, body: Record<string, unknown>) => void,
) {
  const seen: { path: string; body: Record<string, unknown> }[] = [];
  const server: Server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    seen.push({ path: req.url ?? "", body });
    if (req.url === "/info")
      return res.end(JSON.stringify({ name: "inline", version: "1", capabilities: {} }));
    if (req.url === "/run") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return script(res, body);
    }
    res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("remote: the seed's minimal Python HTTP harness, verbatim", () => {
  it("runs turn after turn: text becomes deltas and one message, done settles the turn", async () => {
    const agent = await served(startSeedHarness);
    const brain = remoteBrain();
    const session = await brain.create({
      harness: "remote",
      config: { options: { host: "127.0.0.1", port: agent.port } },
    });
    for (const text of ["hello", "again"]) {
      const turn = await session.prompt(text);
      expect(await turn.settled).toMatchObject({ status: "completed" });
      const all = await events(session);
      expect(textOf(all, turn.turn)).toBe(text);
      expect(all.find((e) => e.turn === turn.turn && e.type === "assistant.message")?.data).toMatchObject({
        text,
        stop_reason: "done",
      });
    }
  });
});

describe("remote: the TypeScript reference server", () => {
  it("sends done's sessionId back with the next run and keeps it in checkpoints", async () => {
    const agent = await served(startTsHttpAgent);
    const brain = remoteBrain();
    const session = await brain.create({ harness: "remote", config: { options: { url: agent.url } } });
    await (await session.prompt("one")).settled;
    const second = await session.prompt("two");
    await second.settled;
    expect(textOf(await events(session), second.turn)).toMatch(/^ts says: two .*session=ts-conv-1\)$/);
    const manifest = await session.checkpoint();
    expect(manifest.files.map((f) => f.path)).toEqual(["nui-session.json"]);
  });

  it("interrupts mid-run with POST /cancel {runId}; the turn settles interrupted and the session goes on", async () => {
    const agent = await served(startTsHttpAgent);
    const brain = remoteBrain();
    const session = await brain.create({ harness: "remote", config: { options: { url: agent.url } } });
    const turn = await session.prompt("slow");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(textOf(await events(session), turn.turn)).toBe("working");
    const next = await session.prompt("after");
    expect((await next.settled).status).toBe("completed");
  });

  it("reports the agent's error event as a failed turn (provider_error) and stays usable", async () => {
    const inline = await sseServer((res, body) => {
      if (body.message === "fail")
        res.write(
          'data: {"type":"text","content":"partial"}\n\ndata: {"type":"error","error":"quota exceeded"}\n\n',
        );
      else res.write('data: {"type":"text","content":"fine"}\n\ndata: {"type":"done"}\n\n');
      res.end();
    });
    const session = await remoteBrain().create({
      harness: "remote",
      config: { options: { url: inline.url } },
    });
    const failed = await (await session.prompt("fail")).settled;
    expect(failed).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(failed.error?.message).toMatch(/quota exceeded/);
    expect((await (await session.prompt("ok")).settled).status).toBe("completed");
  });
});

describe("the SSE stream", () => {
  it("is parsed as SSE: events split across writes, comments, CRLF, event names; nui Go's older spellings are read", async () => {
    const inline = await sseServer((res) => {
      res.write(": keep-alive\r\n");
      res.write('data: {"type":"text",');
      setTimeout(() => {
        res.write('"content":"Hel"}\r\n\r\nevent: message\ndata: {"type":"text","content":"lo"}\n\n');
        res.write(
          'data: {"type":"tool_call_end","toolCallId":"c1","toolName":"grep","toolArgs":"{\\"q\\":\\"x\\"}"}\n\n',
        );
        res.write('data: {"type":"tool_call_result","toolCallId":"c1","content":"2 hits"}\n\n');
        res.write('data: {"type":"image","imageMediaType":"image/png","imageData":"aGk="}\n\n');
        res.write('data: {"type":"thinking","content":"hm"}\n\ndata: {"type":"thinking","content":"hm"}\n\n');
        res.write('data: not json\n\ndata: {"type":"done","sessionId":"s-1"}\n\n');
        res.end();
      }, 20);
    });
    const session = await remoteBrain().create({
      harness: "remote",
      config: { options: { url: inline.url } },
    });
    const turn = await session.prompt("go");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all, turn.turn)).toBe("Hello");
    expect(all.find((e) => e.type === "tool.call")?.data).toEqual({
      id: "c1",
      name: "grep",
      arguments: { q: "x" },
    });
    expect(all.find((e) => e.type === "tool.result")?.data).toEqual({
      id: "c1",
      content: [{ type: "text", text: "2 hits" }],
      is_error: false,
    });
    expect(all.find((e) => e.type === "image")?.data).toEqual({ mime_type: "image/png", data: "aGk=" });
    const warned = warnings(all);
    expect(warned.filter((w) => w.includes('unknown harness event type "thinking"'))).toHaveLength(1);
    expect(warned.join()).toMatch(/SSE data that is not JSON/);
    expect(inline.seen.find((s) => s.path === "/run")?.body).toMatchObject({
      message: "go",
      runId: expect.stringMatching(/^run-/),
    });
  });

  it("reads an agent written for nui's line reader: data lines with no blank line between them", async () => {
    const inline = await sseServer((res) => {
      res.write('data: {"type":"text","content":"Hel"}\ndata: {"type":"text","content":"lo"}\n');
      res.end('data: {"type":"done","sessionId":"s-2"}\n');
    });
    const session = await remoteBrain().create({
      harness: "remote",
      config: { options: { url: inline.url } },
    });
    const turn = await session.prompt("go");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all, turn.turn)).toBe("Hello");
    expect(warnings(all)).toEqual([]);
  });

  it("a stream that ends without done fails the turn with brain_error, and the next turn reconnects", async () => {
    let n = 0;
    const inline = await sseServer((res) => {
      n += 1;
      res.write(`data: {"type":"text","content":"part ${n}"}\n\n`);
      if (n > 1) res.write('data: {"type":"done"}\n\n');
      res.end();
    });
    const session = await remoteBrain().create({
      harness: "remote",
      config: { options: { url: inline.url } },
    });
    const first = await (await session.prompt("a")).settled;
    expect(first).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(first.error?.message).toMatch(/closed its event stream before a done event/);
    expect((await (await session.prompt("b")).settled).status).toBe("completed");
  });

  it("an agent that ignores /cancel is cut off after the grace period", async () => {
    const inline = await sseServer((res) => {
      res.write('data: {"type":"text","content":"tick"}\n\n');
      const timer = setInterval(() => res.write('data: {"type":"text","content":"."}\n\n'), 50);
      res.on("close", () => clearInterval(timer));
    });
    const session = await remoteBrain(new RemoteFactory("remote", { interruptGraceMs: 200 })).create({
      harness: "remote",
      config: { options: { url: inline.url } },
    });
    const turn = await session.prompt("forever");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(inline.seen.find((s) => s.path === "/cancel")?.body).toEqual({
      runId: expect.stringMatching(/^run-/),
    });
  });

  it("warns that a hitl_request raised in an HTTP agent's stream cannot be answered there", async () => {
    const inline = await sseServer((res) => {
      res.write(
        'data: {"type":"hitl_request","requestId":"r-9","kind":"question","payload":{"message":"?"}}\n\n',
      );
      res.end('data: {"type":"done"}\n\n');
    });
    const session = await remoteBrain().create({
      harness: "remote",
      config: { options: { url: inline.url } },
    });
    await (await session.prompt("x")).settled;
    expect(warnings(await events(session)).join()).toMatch(
      /HITL request "r-9".*must create it through NUI_API_URL/,
    );
  });
});

describe("remote: bad input says what is wrong and how to fix it", () => {
  it("an agent that is not there", async () => {
    const port = await freePort(); // nothing listens there
    const session = await remoteBrain().create({
      harness: "remote",
      config: { options: { host: "127.0.0.1", port } },
    });
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toContain(
      `GET http://127.0.0.1:${port}/info failed: fetch failed (ECONNREFUSED)`,
    );
  });

  it.each([
    [{}, /no agent address; set config.options.url/],
    [{ host: "h" }, /no agent address/],
    [{ port: 70000 }, /port: Too big.*set config.options.url/],
    [{ url: "ftp://x" }, /url: .*set config.options.url/],
    // A credential in the URL would be quoted in every error the session's clients read.
    [{ url: "http://user:s3cr3t@h:9090" }, /url: give the agent's base URL alone, without user:password/],
    [{ url: "http://h:9090/agent?token=s3cr3t" }, /url: give the agent's base URL alone/],
  ])("options %j", async (options, message) => {
    const session = await remoteBrain().create({ harness: "remote", config: { options } });
    const error = (await (await session.prompt("x")).settled).error?.message;
    expect(error).toMatch(message);
    expect(error).not.toContain("s3cr3t");
  });
});

describe("docker (a fake docker CLI runs the image's agent locally)", () => {
  it("gives the docker CLI no variable of the host's beyond what docker needs (`-e NAME` reads from there)", () => {
    const env = dockerEnvironment({ PATH: "/bin", HOME: "/h", DOCKER_HOST: "unix:///d", DB_PASSWORD: "pw" });
    expect(env).toEqual({ PATH: "/bin", HOME: "/h", DOCKER_HOST: "unix:///d" });
  });

  function dockerBrain(env: NodeJS.ProcessEnv = {}) {
    const state = tempDir("fake-docker-");
    cleanups.push(() => rmSync(state, { recursive: true, force: true }));
    const cli = new DockerCli(fakeDocker, { ...process.env, FAKE_DOCKER_STATE: state, ...env });
    t = makeBrain({ factories: [new DockerFactory("docker", cli, { healthMs: 20_000 })] });
    return { brain: t.brain, state };
  }

  it("runs the container with the exact docker commands, checks /info, and stops it on close", async () => {
    const { brain, state } = dockerBrain();
    const session = await brain.create({
      harness: "docker",
      config: { options: { image: "seed-echo", containerPort: 9090, env: { GREETING: "hi" } } },
    });
    const turn = await session.prompt("in a container");
    expect((await turn.settled).status).toBe("completed");
    expect(textOf(await events(session), turn.turn)).toBe("in a container");
    let calls = readCalls(state);
    // The sweep of what an earlier run of this session left, alongside the run; the session's id labels its
    // container.
    expect(calls.slice(0, 2).find((c) => c[0] === "ps")).toEqual([
      "ps",
      "-aq",
      "--filter",
      `label=brain.session=${session.id}`,
    ]);
    // The variables go in a file docker reads, never in its argv.
    expect(calls.slice(0, 2).find((c) => c[0] === "run")).toEqual([
      "run",
      "-d",
      "--label",
      `brain.session=${session.id}`,
      "--label",
      "brain.harness=docker",
      "-p",
      "127.0.0.1::9090",
      "--env-file",
      expect.stringMatching(/brain-env\.tmp-.*\/env$/),
      // The session's native dir, at the same path in every container (a fork's files mean what they meant).
      "--mount",
      `type=bind,source=${t!.store.paths(session.id).native},target=/brain/native`,
      ...limitArgs(containerLimits(undefined)),
      "seed-echo",
    ]);
    const port = calls.find((c) => c[0] === "port");
    const id = port?.[1];
    expect(port).toEqual(["port", id, "9090"]);
    const container = JSON.parse(readFileSync(join(state, "containers", `${id}.json`), "utf8"));
    expect(container.env).toEqual({
      GREETING: "hi",
      BRAIN_NATIVE_DIR: "/brain/native",
      BRAIN_AGENT_TOKEN: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    await brain.closeSession(session.id);
    calls = readCalls(state);
    expect(calls.slice(-2)).toEqual([
      ["stop", "-t", "2", id],
      ["rm", "-f", "-v", id],
    ]);
  });

  it("says when Docker is not running, when the image does not exist, and when the docker CLI is missing", async () => {
    const down = dockerBrain({ FAKE_DOCKER_DOWN: "1" });
    let session = await down.brain.create({
      harness: "docker",
      config: { options: { image: "seed-echo", containerPort: 9090 } },
    });
    expect((await (await session.prompt("x")).settled).error?.message).toMatch(
      /Docker is not running or not reachable .*start the Docker daemon/,
    );
    await t?.cleanup();
    const missing = dockerBrain();
    session = await missing.brain.create({
      harness: "docker",
      config: { options: { image: "nope:1", containerPort: 9090 } },
    });
    expect((await (await session.prompt("x")).settled).error?.message).toMatch(
      /Unable to find image 'nope:1'.*build the image first/s,
    );
    await t?.cleanup();
    t = makeBrain({ factories: [new DockerFactory("docker", new DockerCli("/nonexistent/bin/docker"))] });
    session = await t.brain.create({
      harness: "docker",
      config: { options: { image: "x", containerPort: 1 } },
    });
    expect((await (await session.prompt("x")).settled).error?.message).toMatch(
      /the docker CLI "\/nonexistent\/bin\/docker" does not exist.*install Docker/,
    );
  });

  it("names the missing image and containerPort", async () => {
    const { brain } = dockerBrain();
    const session = await brain.create({ harness: "docker", config: { options: { image: "seed-echo" } } });
    expect((await (await session.prompt("x")).settled).error?.message).toMatch(
      /containerPort: .*set config.options.image and containerPort/,
    );
    const ported = await brain.create({
      harness: "docker",
      config: { options: { image: "seed-echo", containerPort: 9090, host_ports: [11434] } },
    });
    expect((await (await ported.prompt("x")).settled).error?.message).toMatch(
      /host_ports needs network: "none"/,
    );
  });
});
