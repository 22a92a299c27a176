// An MCP server whose first start fails (a bad command, a crash at start, a handshake that never comes) is tried
// again by a later turn, within a bounded backoff, and each failure is a warning that names the server and why.
// A running server that says its tools changed (notifications/tools/list_changed) is listed afresh the same way.
import { join } from "node:path";
import { expect, it } from "vitest";
import { apiTestBed } from "../../harnesses/api/testing/bed.js";
import type { McpServers } from "../../protocol/config.js";
import type { SessionEvent } from "../../protocol/events.js";
import { events, tempDir } from "../../testing/brain.js";
import type { ToolServiceEvent } from "../tool-service.js";
import { mcpSessionTools } from "./index.js";
import { failingFirstStdio, fixtureStdio } from "./testing/servers.js";

const bed = apiTestBed();

async function apiSession(mcp_servers: McpServers, startRetryDelays?: number[]) {
  const { brain } = bed.brain({
    sessionTools: mcpSessionTools({
      baseDir: tempDir(),
      env: {},
      ...(startRetryDelays ? { startRetryDelays } : {}),
    }),
  });
  return brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", options: { retry_base_ms: 1 } },
    mcp_servers,
  });
}

const offered = (request: number): string[] =>
  (bed.fake.requests[request]?.body.tools ?? []).map((tool: { name: string }) => tool.name);
/** The warnings about MCP servers (the api harness warns of the fake model's unknown limits too). */
const warnings = (all: SessionEvent[]) =>
  all
    .filter((e) => e.type === "harness.warning")
    .map((e) => (e.data as { message: string }).message)
    .filter((message) => message.startsWith("MCP server"));
const states = (all: SessionEvent[]) =>
  all.filter((e) => e.type === "tool.service").map((e) => (e.data as ToolServiceEvent).state);

it("starts a server whose first start failed again at the next turn, and offers the model its tools", async () => {
  const session = await apiSession({ fx: failingFirstStdio(join(tempDir(), "started-once")) });
  bed.fake.script([{ text: "no tools yet" }]);
  expect((await (await session.prompt("first")).settled).status).toBe("completed");
  expect(offered(0)).not.toContain("fx__echo");

  bed.fake.script([
    { toolCalls: [{ name: "fx__echo", arguments: { text: "now it runs" } }] },
    { text: "done" },
  ]);
  expect((await (await session.prompt("second")).settled).status).toBe("completed");
  expect(offered(1)).toContain("fx__echo");
  const all = await events(session);
  expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({
    is_error: false,
    content: [{ text: "now it runs" }],
  });
  expect(states(all)).toEqual(["failed", "started"]);
  expect(warnings(all)).toEqual([
    expect.stringMatching(
      /^MCP server "fx" did not start: .*first start: not ready yet.*the next turn tries it again/,
    ),
  ]);
});

it("tries a server that keeps failing once per backoff step, with a warning naming it and the error each time", async () => {
  const session = await apiSession(
    {
      broken: {
        command: process.execPath,
        args: ["-e", "console.error('cannot open the db'); process.exit(2)"],
      },
    },
    [0, 3_600_000],
  );
  for (const text of ["one", "two", "three"]) {
    bed.fake.script([{ text: "ok" }]);
    expect((await (await session.prompt(text)).settled).status).toBe("completed");
  }
  const all = await events(session);
  // The first start, the retry of the next turn; the third turn comes well within the hour the backoff then asks.
  expect(states(all)).toEqual(["failed", "failed"]);
  expect(warnings(all)).toEqual([
    expect.stringMatching(
      /^MCP server "broken" did not start: .*cannot open the db.*the next turn tries it again/,
    ),
    expect.stringMatching(
      /^MCP server "broken" did not start: .*cannot open the db.*the first turn after 3600 s tries it again/,
    ),
  ]);
});

it("offers the tools a running server says it has now (tools/list_changed) from the next turn", async () => {
  const session = await apiSession({
    fx: fixtureStdio({ tools: ["grow", "grown"], env: { FIXTURE_GROW: "1" } }),
  });
  bed.fake.script([{ toolCalls: [{ name: "fx__grow", arguments: {} }] }, { text: "grew" }]);
  expect((await (await session.prompt("first")).settled).status).toBe("completed");
  expect(offered(0)).toEqual(["fx__grow"]);

  bed.fake.script([{ toolCalls: [{ name: "fx__grown", arguments: {} }] }, { text: "done" }]);
  expect((await (await session.prompt("second")).settled).status).toBe("completed");
  expect(offered(2)).toEqual(["fx__grow", "fx__grown"]);
  const all = await events(session);
  expect(all.filter((e) => e.type === "tool.result").at(-1)?.data).toMatchObject({
    is_error: false,
    content: [{ text: "grown" }],
  });
  const changed = all.filter((e) => e.type === "tool.service").at(-1)?.data;
  expect(changed).toMatchObject({ service: "fx", state: "started", tools: ["fx__grow", "fx__grown"] });
  expect((changed as ToolServiceEvent).message).toMatch(/its tools changed/);
});

it("gives a relist up when its turn is interrupted", async () => {
  const session = await apiSession({
    fx: fixtureStdio({
      tools: ["grow", "grown"],
      env: { FIXTURE_GROW: "hang" },
      // Longer than the test's own timeout: only the interrupt can end the wait.
      startup_timeout_ms: 3_600_000,
    }),
  });
  bed.fake.script([{ toolCalls: [{ name: "fx__grow", arguments: {} }] }, { text: "grew" }]);
  expect((await (await session.prompt("first")).settled).status).toBe("completed");
  const stuck = await session.prompt("second");
  await session.interrupt();
  expect((await stuck.settled).status).toBe("interrupted");
  expect(bed.fake.requests).toHaveLength(2);
});
