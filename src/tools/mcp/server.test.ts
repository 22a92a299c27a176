// One MCP server as a tool service, driven directly (no session around it): servers that break the protocol or
// Brain's limits get an error result and a stopped process, and never take Brain's memory or its close with them.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServer } from "../../protocol/config.js";
import { tempDir } from "../../testing/brain.js";
import { alive } from "../../testing/processes.js";
import type { ToolServiceEvent } from "../tool-service.js";
import { OutputSchemaChecks } from "./output-schemas.js";
import { McpServerService } from "./server.js";
import { McpSessionServers } from "./session-servers.js";
import { MAX_LINE_BYTES } from "./stdio-transport.js";
import { fixtureStdio } from "./testing/servers.js";

const services: McpServerService[] = [];
/** Processes a server left behind: killed after each test, whatever it found. */
const orphans: number[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
  for (const pid of orphans.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
});

/** A started service for `config`, named fx, and the events it reported. */
async function serve(config: McpServer = fixtureStdio(), restartDelays: number[] = []) {
  const events: ToolServiceEvent[] = [];
  const service = new McpServerService(
    { name: "fx", config, baseDir: process.cwd(), env: {} },
    (event) => events.push(event),
    restartDelays,
  );
  services.push(service);
  await service.start();
  return { service, events };
}

const call = (service: McpServerService, tool: string, args: Record<string, unknown> = {}) =>
  service.call(`fx__${tool}`, args, new AbortController().signal);

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("a stdio server that breaks Brain's limits", () => {
  it("is stopped when it sends requests without reading Brain's answers, and the call says why", async () => {
    // A deadline of its own, so that without the limit the call ends (as a timeout) before memory runs short.
    const { service, events } = await serve(fixtureStdio({ call_timeout_ms: 15_000 }));
    const pid = Number((await call(service, "pid")).content[0]?.text);
    const result = await call(service, "flood");
    expect(result).toMatchObject({
      is_error: true,
      content: [
        {
          text: expect.stringMatching(
            /^MCP server "fx" was stopped during the call to flood: it did not read its input \(4096 messages, \d+ bytes from Brain waiting; the limit is 4096 messages or 67108864 bytes\); it is being restarted$/,
          ),
        },
      ],
    });
    expect(events.at(-1)).toMatchObject({
      state: "exited",
      message: expect.stringMatching(/^Brain stopped it: it did not read its input/),
    });
    await expect.poll(() => isAlive(pid)).toBe(false);
  });

  it(`is stopped when it writes a line past ${MAX_LINE_BYTES >> 20} MiB with no end, and the call says why`, async () => {
    const { service, events } = await serve(fixtureStdio({ call_timeout_ms: 15_000 }));
    const pid = Number((await call(service, "pid")).content[0]?.text);
    expect(await call(service, "endless_line")).toMatchObject({
      is_error: true,
      content: [
        {
          text: `MCP server "fx" was stopped during the call to endless_line: it wrote a line of more than ${MAX_LINE_BYTES} bytes with no end; it is being restarted`,
        },
      ],
    });
    expect(events.at(-1)).toMatchObject({
      state: "exited",
      message: expect.stringMatching(/^Brain stopped it: it wrote a line/),
    });
    await expect.poll(() => isAlive(pid)).toBe(false);
  });
});

describe("a tool that reports progress and never answers", () => {
  it("ends at call_total_timeout_ms, though each report starts call_timeout_ms afresh", async () => {
    const { service } = await serve(fixtureStdio({ call_timeout_ms: 300, call_total_timeout_ms: 1_500 }));
    expect(await call(service, "progress")).toEqual({
      is_error: true,
      content: [
        {
          type: "text",
          text: 'MCP server "fx" did not finish progress within 1.5 s, however much progress it reported (call_total_timeout_ms)',
        },
      ],
    });
    // The server was told the call is cancelled and serves on.
    expect(await call(service, "echo", { text: "still here" })).toMatchObject({
      content: [{ text: "still here" }],
    });
  });
});

describe("a server that leaves a process behind holding its pipes", () => {
  const orphan = async (service: McpServerService) => {
    const pid = Number((await call(service, "orphan")).content[0]?.text);
    orphans.push(pid);
    return pid;
  };

  it("is seen to exit when it crashes, and is restarted; what it left goes with it", async () => {
    // A deadline of its own, so that a crash that is not seen ends the call (as a timeout) within the test's.
    const { service, events } = await serve(fixtureStdio({ call_timeout_ms: 15_000 }), [10]);
    const left = await orphan(service);
    expect(await call(service, "crash")).toMatchObject({
      is_error: true,
      content: [{ text: 'MCP server "fx" exited during the call to crash; it is being restarted' }],
    });
    await expect.poll(() => alive(left)).toBe(false);
    await expect.poll(() => events.map((e) => e.state)).toEqual(["started", "exited", "restarted"]);
    expect(await call(service, "echo", { text: "back" })).toMatchObject({ content: [{ text: "back" }] });
  });

  it("takes it along when it is closed", async () => {
    const { service } = await serve();
    const pid = Number((await call(service, "pid")).content[0]?.text);
    const left = await orphan(service);
    await service.close();
    expect(alive(pid)).toBe(false);
    await expect.poll(() => alive(left)).toBe(false);
  });
});

describe("a server that dies soon after each start", () => {
  it("is restarted automatically as many times as it is given, then only by a call, and says so", async () => {
    const exits = fixtureStdio({ env: { FIXTURE_EXIT_AFTER_LIST: "50" } });
    const { service, events } = await serve(exits, [10, 10]);
    const outOfRestarts =
      /; no more automatic restarts .*: the next call to one of its tools starts it again$/;
    await expect.poll(() => events.at(-1)?.message).toMatch(outOfRestarts);
    // Two restarts, after each of which it died, then none: the list is final until a call.
    const states = () => events.map((e) => e.state);
    expect(states()).toEqual(["started", "exited", "restarted", "exited", "restarted", "exited"]);
    // A call starts it again (and, answered by no server, does not count the restarts afresh).
    expect((await call(service, "crash")).is_error).toBe(true);
    await expect.poll(() => states().slice(6)).toEqual(["restarted", "exited"]);
    expect(events.at(-1)?.message).toMatch(outOfRestarts);
  });
});

describe("a server that answers with something that is not a tool result", () => {
  it("gets an error result naming what is wrong, and keeps running: no restart, no second process", async () => {
    const { service, events } = await serve(fixtureStdio(), [10]);
    const pid = Number((await call(service, "pid")).content[0]?.text);
    expect(await call(service, "malformed")).toEqual({
      is_error: true,
      content: [
        {
          type: "text",
          text: 'MCP server "fx" answered malformed with something that is not an MCP tool result: content: Invalid input: expected array, received string',
        },
      ],
    });
    expect(await call(service, "pid")).toMatchObject({ is_error: false, content: [{ text: String(pid) }] });
    expect(events.map((e) => e.state)).toEqual(["started"]);
    await service.close();
    expect(isAlive(pid)).toBe(false);
  });
});

describe("a server that answers with a message that is not JSON-RPC 2.0", () => {
  it("fails that call at once with an error naming what is wrong, instead of leaving it to time out", async () => {
    const { service, events } = await serve(fixtureStdio({ call_timeout_ms: 20_000 }), [10]);
    const result = await call(service, "unversioned");
    expect(result.is_error).toBe(true);
    expect(result.content[0]?.text).toMatch(
      /^MCP server "fx" answered unversioned with a message that is not JSON-RPC 2\.0 \(its "jsonrpc" is not "2\.0"\)$/,
    );
    // The server goes on: its next call is answered.
    expect(await call(service, "echo", { text: "still here" })).toMatchObject({
      is_error: false,
      content: [{ text: "still here" }],
    });
    expect(events.map((e) => e.state)).toEqual(["started"]);
  });
});

describe("closing while a server starts", () => {
  it("stops a server that never answers initialize instead of waiting out its startup timeout", async () => {
    const dir = tempDir();
    const pidFile = join(dir, "pid");
    // Never answers and never reads its input: only a kill ends it.
    const hanging = `require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1 << 30);`;
    const servers = new McpSessionServers(
      { slow: { command: process.execPath, args: ["-e", hanging], startup_timeout_ms: 2_000_000_000 } },
      { baseDir: dir, env: {} },
    );
    const events: ToolServiceEvent[] = [];
    const started = servers.start((event) => events.push(event));
    await expect.poll(() => readFileSync(pidFile, "utf8").length > 0 || undefined).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await servers.close();
    expect(await started).toHaveLength(1);
    expect(isAlive(pid)).toBe(false);
    expect(events).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("a tool's output schema, from its server", () => {
  const withSchema = (tool: string) => fixtureStdio({ env: { FIXTURE_OUTPUT_SCHEMA: tool } });

  it("one that does not compile checks nothing, and the server's tools all start", async () => {
    const { service, events } = await serve(withSchema("unchecked"));
    expect(events).toMatchObject([{ state: "started", tools: expect.arrayContaining(["fx__unchecked"]) }]);
    expect(await call(service, "echo", { text: "hi" })).toMatchObject({ is_error: false });
    expect(await call(service, "unchecked")).toEqual({
      is_error: false,
      content: [{ type: "text", text: '{"a":1}' }],
    });
  });

  it("its patterns are not run on Brain's loop (no ReDoS): the result is taken as the server gave it", async () => {
    const { service } = await serve(withSchema("structured"));
    // Against ^(a+)+$, each more a before the '!' doubles a backtracking engine's work.
    const a = `${"a".repeat(25)}!`;
    expect(await call(service, "structured", { a })).toEqual({
      is_error: false,
      content: [{ type: "text", text: JSON.stringify({ a }) }],
    });
  });

  it("no pattern is run on Brain's loop, also one a $ref or `dependencies` reaches, nor a format or uniqueItems", () => {
    const catastrophic = "^(a+)+$";
    const checks = new OutputSchemaChecks();
    const schemas = [
      { type: "object", dependencies: { a: { properties: { a: { pattern: catastrophic } } } } },
      { type: "object", properties: { a: { $ref: "#/hidden" } }, hidden: { pattern: catastrophic } },
      { type: "object", properties: { a: { $ref: "#/default/0" } }, default: [{ pattern: catastrophic }] },
      { type: "object", properties: { a: { type: "string", format: "email" } } },
    ];
    // Nor uniqueItems, which Ajv checks pair by pair: a server's long result would hold the loop.
    const unique = checks.getValidator({ type: "object", properties: { a: { uniqueItems: true } } });
    expect(unique({ a: [[1], [1]] }).valid).toBe(true);
    // Enough backtracking to show whether the pattern ran, not so much that a regression blocks the test.
    const a = `${"a".repeat(20)}!`;
    for (const schema of schemas) expect(checks.getValidator(schema)({ a }).valid).toBe(true);
  });
});

describe("a server whose tools/list pages never end", () => {
  it.each([
    [
      "same",
      /^its tools\/list gave the cursor "again" twice: its pages do not end; the next turn tries it again$/,
    ],
    [
      "endless",
      /^its tools\/list offered more than 4096 tools \(its pages may not end\); the next turn tries it again$/,
    ],
  ])("fails its start at once, saying so, when each page's cursor is %s", async (pages, message) => {
    // Without a stop, the pages pile up in memory until this deadline.
    const { events } = await serve(
      fixtureStdio({ env: { FIXTURE_PAGES: pages }, startup_timeout_ms: 120_000 }),
    );
    expect(events).toEqual([{ service: "fx", state: "failed", message: expect.stringMatching(message) }]);
  });
});
