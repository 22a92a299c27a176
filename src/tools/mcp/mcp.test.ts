// MCP servers as session tool services: real servers (server-everything from npm over stdio and streamable HTTP,
// the project's misbehaving fixture over stdio), called by the model through the api harness, by a runner
// through reverse tool.call, and directly; start failures, timeouts, crashes and restarts.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Brain } from "../../core/brain.js";
import { HarnessRegistry } from "../../core/registry.js";
import type { Session } from "../../core/session.js";
import { ApiHarnessFactory } from "../../harnesses/api/factory.js";
import { credentialsFor, startKeyedProvider } from "../../harnesses/api/testing/provider.js";
import { McpServer, McpServers } from "../../protocol/config.js";
import type { SessionEvent } from "../../protocol/events.js";
import type { PermissionPolicy } from "../../protocol/permissions.js";
import { FsSessionStore } from "../../store/fs/index.js";
import { echoFactory, events, tempDir, waitForEvent } from "../../testing/brain.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { BuiltinTools } from "../builtin.js";
import { ToolRouter } from "../router.js";
import type { ToolService, ToolServiceEvent } from "../tool-service.js";
import { McpSessionServers, mcpSessionTools } from "./index.js";
import { everythingStdio, fixtureStdio, type HttpServer, startEverythingHttp } from "./testing/servers.js";

let fake: FakeProvider;
let http: HttpServer;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [fake, http] = await Promise.all([startKeyedProvider(), startEverythingHttp()]);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  fake.reset();
});
afterAll(async () => {
  await Promise.all([fake.close(), http.stop()]);
});

/** A Brain wired as the CLI wires it: api and echo harnesses, built-in tools, MCP servers per session. */
function mcpBrain(env: NodeJS.ProcessEnv = {}) {
  const home = tempDir();
  const brain = new Brain({
    store: new FsSessionStore(home),
    harnesses: new HarnessRegistry([new ApiHarnessFactory(), echoFactory()]),
    tools: new ToolRouter([new BuiltinTools()]),
    credentials: () => credentialsFor("anthropic", fake),
    sessionTools: mcpSessionTools({ baseDir: home, env, restartDelays: [10, 10] }),
  });
  cleanups.push(async () => {
    await brain.close();
    rmSync(home, { recursive: true, force: true });
  });
  return brain;
}

const brains = new WeakMap<Session, Brain>();
const brainOf = (session: Session) => brains.get(session)!;

async function apiSession(mcp_servers: McpServers, permissions?: PermissionPolicy, env?: NodeJS.ProcessEnv) {
  const brain = mcpBrain(env);
  const session = await brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", options: { retry_base_ms: 1 } },
    mcp_servers,
    ...(permissions ? { permissions } : {}),
  });
  brains.set(session, brain);
  return session;
}

/** Runs one turn in which the model calls `tool` with `args`, and returns that call's result. */
async function modelCalls(session: Session, tool: string, args: Record<string, unknown>) {
  fake.script([{ toolCalls: [{ name: tool, arguments: args }] }, { text: "done" }]);
  const outcome = await (await session.prompt(`use ${tool}`)).settled;
  expect(outcome.status).toBe("completed");
  const all = await events(session);
  const results = all.filter((e) => e.type === "tool.result");
  return results.at(-1)?.data as { content: { text: string }[]; is_error: boolean };
}

/** `${NAME}`, the reference syntax of MCP server configs (written so, it is not a template mistake). */
const ref = (name: string) => `$\{${name}}`;

const serviceEvents = (all: SessionEvent[]) =>
  all.filter((e) => e.type === "tool.service").map((e) => e.data as ToolServiceEvent);

describe("a real MCP server from npm, called by the model", () => {
  it("over stdio: its tools join the session as server__tool and run end to end", async () => {
    const session = await apiSession({ everything: everythingStdio() });
    const result = await modelCalls(session, "everything__echo", { message: "over stdio" });
    expect(result).toMatchObject({ content: [{ type: "text", text: "Echo: over stdio" }], is_error: false });
    const all = await events(session);
    const [started] = serviceEvents(all);
    expect(started).toMatchObject({ service: "everything", state: "started" });
    expect(started?.tools).toEqual(expect.arrayContaining(["everything__echo", "everything__get-sum"]));
    // The model was offered the MCP tools with their schemas.
    const offered = fake.requests[0]!.body.tools.map((t: { name: string }) => t.name);
    expect(offered).toContain("everything__get-sum");
    const sum = fake.requests[0]!.body.tools.find((t: { name: string }) => t.name === "everything__get-sum");
    expect(sum.input_schema).toMatchObject({ type: "object", required: ["a", "b"] });
    expect(sum.input_schema.$schema).toBeUndefined();
  });

  it("over streamable HTTP", async () => {
    const session = await apiSession({ web: { url: http.url } });
    const result = await modelCalls(session, "web__get-sum", { a: 2, b: 40 });
    expect(result.is_error).toBe(false);
    expect(result.content[0]?.text).toMatch(/42/);
  });

  it("over the older SSE transport", async () => {
    const sse = await startEverythingHttp("sse");
    cleanups.push(() => sse.stop());
    const session = await apiSession({ legacy: { type: "sse", url: sse.url } });
    const result = await modelCalls(session, "legacy__echo", { message: "over sse" });
    expect(result).toMatchObject({ is_error: false, content: [{ text: "Echo: over sse" }] });
  });

  it("checks arguments against the server's schema before the call, as for any bound tool", async () => {
    const session = await apiSession({ everything: everythingStdio() });
    const result = await modelCalls(session, "everything__get-sum", { a: 1 });
    expect(result).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/invalid arguments/) }],
    });
  });
});

describe("every harness family can call MCP tools", () => {
  it("a process runner calls one by reverse tool.call", async () => {
    const brain = mcpBrain();
    const session = await brain.create({ harness: "echo", mcp_servers: { fx: fixtureStdio() } });
    await (await session.prompt('call the tool "fx__echo" with {"text":"from a runner"}')).settled;
    const result = (await events(session)).find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({ is_error: false, content: [{ text: "from a runner" }] });
  });
});

describe("when servers misbehave, the model gets an error result and the session goes on", () => {
  it("a server that cannot start, or not in time: a failed event naming the cause; the turn still runs", async () => {
    const session = await apiSession({
      missing: { command: "brain-no-such-mcp-server" },
      quitter: {
        command: process.execPath,
        args: ["-e", "console.error('no config, giving up'); process.exit(3)"],
      },
      silent: {
        command: process.execPath,
        args: ["-e", "setInterval(() => {}, 1000)"],
        startup_timeout_ms: 300,
      },
      fx: fixtureStdio(),
    });
    const result = await modelCalls(session, "fx__echo", { text: "still here" });
    expect(result.content[0]?.text).toBe("still here");
    const failed = serviceEvents(await events(session)).filter((e) => e.state === "failed");
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          service: "missing",
          message: expect.stringMatching(/could not start "brain-no-such-mcp-server": no such command/),
        }),
        expect.objectContaining({
          service: "quitter",
          message: expect.stringMatching(/no config, giving up/),
        }),
        expect.objectContaining({
          service: "silent",
          message: "did not start within 0.3 s; the next turn tries it again",
        }),
      ]),
    );
  });

  it("a tool error and an unknown tool are error results", async () => {
    const session = await apiSession({ fx: fixtureStdio() });
    expect(await modelCalls(session, "fx__fail", {})).toMatchObject({
      is_error: true,
      content: [{ text: "this tool always fails" }],
    });
    expect(await modelCalls(session, "fx__nope", {})).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/not bound/) }],
    });
  });

  it("a call that outlives call_timeout_ms", async () => {
    const session = await apiSession({ fx: fixtureStdio({ call_timeout_ms: 200 }) });
    expect(await modelCalls(session, "fx__sleep", { ms: 10_000 })).toMatchObject({
      is_error: true,
      content: [{ text: 'MCP server "fx" did not answer sleep within 0.2 s' }],
    });
  });

  it("a server that dies mid-call is restarted, and the next call reaches the new one", async () => {
    const session = await apiSession({ fx: fixtureStdio() });
    const before = (await modelCalls(session, "fx__pid", {})).content[0]?.text;
    expect(await modelCalls(session, "fx__crash", {})).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/exited during the call to crash; it is being restarted/) }],
    });
    await waitForEvent(
      session,
      (e) => e.type === "tool.service" && (e.data as ToolServiceEvent).state === "restarted",
    );
    const after = (await modelCalls(session, "fx__pid", {})).content[0]?.text;
    expect(Number(after)).toBeGreaterThan(0);
    expect(after).not.toBe(before);
    const states = serviceEvents(await events(session)).map((e) => e.state);
    expect(states).toEqual(["started", "exited", "restarted"]);
    const exited = serviceEvents(await events(session)).find((e) => e.state === "exited");
    expect(exited?.message).toMatch(/crashing on purpose/);
  });

  it("is denied like any tool by the session's permission policy", async () => {
    const session = await apiSession({ fx: fixtureStdio() }, { tools: { "fx__*": "deny" } });
    expect(await modelCalls(session, "fx__echo", { text: "x" })).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/permission to run tool "fx__echo" was denied/) }],
    });
  });
});

describe("configuration", () => {
  it("expands $VAR references from the host environment, and names a variable that is not set", async () => {
    const env = { SECRET_FOR_TEST: "s3cret" };
    const session = await apiSession(
      { fx: fixtureStdio({ env: { GIVEN: ref("SECRET_FOR_TEST") } }) },
      undefined,
      env,
    );
    expect((await modelCalls(session, "fx__env", { name: "GIVEN" })).content[0]?.text).toBe("s3cret");
    // The session record keeps the reference, not the secret.
    const record = JSON.stringify(await brainOf(session).record(session.id));
    expect(record).toContain(ref("SECRET_FOR_TEST"));
    expect(record).not.toContain("s3cret");

    const broken = await apiSession({ fx: fixtureStdio({ env: { GIVEN: ref("NOT_SET_ANYWHERE") } }) });
    await modelCalls(broken, "fx__env", { name: "GIVEN" });
    const [failed] = serviceEvents(await events(broken));
    expect(failed).toMatchObject({
      state: "failed",
      message: `mcp_servers.fx.env.GIVEN uses ${ref("NOT_SET_ANYWHERE")}, but NOT_SET_ANYWHERE is not set; the next turn tries it again`,
    });
  });

  it("offers only the listed tools, under names providers accept", async () => {
    const servers = new McpSessionServers(
      { fx: fixtureStdio({ tools: ["echo", "odd.name"] }) },
      { baseDir: tempDir(), env: {} },
    );
    cleanups.push(() => servers.close());
    const [service] = await servers.start(() => {});
    const names = (await service!.list()).map((t) => t.name);
    expect(names).toEqual(["fx__echo", "fx__odd_name"]);
    const result = await service!.call("fx__odd_name", {}, new AbortController().signal);
    expect(result).toEqual({ content: [{ type: "text", text: "odd" }], is_error: false });
  });

  it("gives a session name two servers' tools share to the first server, and the other's event says so", async () => {
    // `git` + `_env` and `git_` + `env` are both `git___env`; the servers tell apart by their variable.
    const session = await apiSession({
      git_: fixtureStdio({ tools: ["env", "pid"] }),
      git: fixtureStdio({ tools: ["_env"], env: { FIXTURE_TOOL_PREFIX: "_" } }),
    });
    const result = await modelCalls(session, "git___env", { name: "FIXTURE_TOOL_PREFIX" });
    expect(result).toMatchObject({ content: [{ type: "text", text: "(unset)" }], is_error: false });
    const started = serviceEvents(await events(session));
    expect(started.find((e) => e.service === "git_")).toEqual({
      service: "git_",
      state: "started",
      tools: ["git___pid", "git___env"],
    });
    expect(started.find((e) => e.service === "git")).toEqual({
      service: "git",
      state: "started",
      tools: [],
      message: 'skipped tools whose names the session has given first: git___env (server "git_"\'s)',
    });
  });

  it("refuses a config.tools name in a server's namespace; a session recorded with one keeps it, and the server says so", async () => {
    // A host tool named as server "fx"'s echo would be: bound, it would answer every call meant for the server.
    const hostEcho: ToolService = {
      list: async () => [{ name: "fx__echo", input_schema: { type: "object" } }],
      call: async () => ({ content: [{ type: "text", text: "the host's" }], is_error: false }),
    };
    const home = tempDir();
    const open = () =>
      new Brain({
        store: new FsSessionStore(home),
        harnesses: new HarnessRegistry([new ApiHarnessFactory()]),
        tools: new ToolRouter([new BuiltinTools(), hostEcho]),
        credentials: () => credentialsFor("anthropic", fake),
        sessionTools: mcpSessionTools({ baseDir: home, env: {} }),
      });
    const brain = open();
    cleanups.push(async () => rmSync(home, { recursive: true, force: true }));
    const config = { model: "anthropic:fake-model", tools: ["fx__echo"], options: { retry_base_ms: 1 } };
    await expect(
      brain.create({ harness: "api", config, mcp_servers: { fx: fixtureStdio() } }),
    ).rejects.toMatchObject({
      code: "bad_request",
      field: "config.tools",
      message: expect.stringMatching(
        /tool "fx__echo" in config.tools is in MCP server "fx"'s namespace .*rename the tool so its name does not start with "fx__"/,
      ),
    });
    // As a session made before the rule was: recorded with another server, renamed on disk.
    const made = await brain.create({
      harness: "api",
      config,
      mcp_servers: { fy: fixtureStdio({ tools: ["echo", "pid"] }) },
    });
    const recordFile = new FsSessionStore(home).paths(made.id).record;
    await brain.close();
    writeFileSync(recordFile, readFileSync(recordFile, "utf8").replace('"fy":', '"fx":'));
    const again = open();
    cleanups.push(() => again.close());
    const session = await again.session(made.id);
    const result = await modelCalls(session, "fx__echo", {});
    expect(result).toMatchObject({ content: [{ type: "text", text: "the host's" }], is_error: false });
    expect(serviceEvents(await events(session)).find((e) => e.service === "fx")).toEqual({
      service: "fx",
      state: "started",
      tools: ["fx__pid"],
      message: "skipped tools whose names the session has given first: fx__echo (config.tools')",
    });
    // A fork or a handoff carries the recorded tools, which its caller cannot rename: it goes on as its source.
    await session.checkpoint();
    for (const next of [await again.fork(made.id), await again.handoff(made.id, { to: "api" })]) {
      expect(await modelCalls(next, "fx__echo", {})).toMatchObject({ content: [{ text: "the host's" }] });
      expect(serviceEvents(await events(next)).find((e) => e.service === "fx")?.tools).toEqual(["fx__pid"]);
    }
  });

  it("validates server entries with messages that say what to fix", () => {
    const problems = (value: unknown) => {
      const parsed = McpServer.safeParse(value);
      return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
    };
    expect(problems({ command: "x", url: "http://h/mcp" })).toEqual([
      "give either command (a stdio server) or url (streamable HTTP)",
    ]);
    expect(problems({ url: "http://h/mcp", env: { A: "b" } })).toEqual([
      '"env" is for stdio servers, and this one has a url',
    ]);
    expect(problems({ command: "x", type: "http" })).toEqual(['type "http" does not match']);
    // A timer holds at most 2^31 - 1 ms; past that it would fire at once and every call would time out.
    const timer = (ms: number) => problems({ command: "x", call_timeout_ms: ms, startup_timeout_ms: ms });
    expect(timer(2_147_483_647)).toEqual([]);
    expect(timer(2_147_483_648)).toEqual([
      "at most 2147483647 ms (about 24.8 days, the longest a timer can wait); leave it out for the default of 30000",
      "at most 2147483647 ms (about 24.8 days, the longest a timer can wait); leave it out for the default of 120000",
    ]);
    expect(McpServers.safeParse({ a__b: { command: "x" } }).success).toBe(false);
    expect(McpServer.safeParse({ type: "stdio", command: "npx", args: ["-y", "pkg"], env: {} }).success).toBe(
      true,
    );
  });

  it("refuses mcp_servers on a host that runs none", async () => {
    const home = tempDir();
    const brain = new Brain({
      store: new FsSessionStore(home),
      harnesses: new HarnessRegistry([echoFactory()]),
      tools: new ToolRouter([]),
    });
    cleanups.push(() => brain.close());
    await expect(brain.create({ harness: "echo", mcp_servers: { fx: fixtureStdio() } })).rejects.toThrow(
      /runs no MCP servers/,
    );
  });
});

describe("lifecycle", () => {
  it("starts with the session's first use, stops when it closes", async () => {
    const brain = mcpBrain();
    const session = await brain.create({ harness: "echo", mcp_servers: { fx: fixtureStdio() } });
    expect(serviceEvents(await events(session))).toEqual([]);
    await (await session.prompt('call the tool "fx__pid" with {}')).settled;
    const result = (await events(session)).find((e) => e.type === "tool.result");
    const pid = Number((result?.data as { content: { text: string }[] } | undefined)?.content[0]?.text);
    expect(() => process.kill(pid, 0)).not.toThrow();
    await brain.closeSession(session.id);
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    const reopened = await brain.session(session.id);
    const all = await events(reopened);
    expect(serviceEvents(all).map((e) => e.state)).toEqual(["started", "stopped"]);
    const stopped = all.findIndex(
      (e) => e.type === "tool.service" && (e.data as ToolServiceEvent).state === "stopped",
    );
    expect(all[stopped + 1]?.type).toBe("session.closed");
  });
});
