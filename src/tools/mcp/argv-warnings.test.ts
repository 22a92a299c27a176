// A stdio MCP server whose `args` hold a credential (`--api-key ${KEY}`, an Authorization header): its command line
// shows the key to every local user. Brain still starts it (the config works), and the session's log says which
// argument and where the key goes instead, without the key.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in args is what this test is about
import { afterEach, expect, it } from "vitest";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { mcpSessionTools } from "./index.js";
import { fixtureStdio } from "./testing/servers.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

it("warns once about each argument that puts a credential on a server's command line, and starts it", async () => {
  const key = "argvwarn-key-0123456789";
  const env = { ARGVWARN_KEY: key };
  t = makeBrain({ sessionTools: mcpSessionTools({ baseDir: process.cwd(), env }), env });
  const fx = fixtureStdio();
  const session = await t.brain.create({
    harness: "echo",
    mcp_servers: {
      fx: { ...fx, args: [...fx.args!, "--api-key", "${ARGVWARN_KEY}", "--token-file", "/run/token"] },
      hdr: { ...fx, args: [...fx.args!, "--header", "Authorization: Bearer written-out-4567", "--verbose"] },
    },
  });
  for (const n of [1, 2]) {
    const turn = await session.prompt(`call the tool "fx__env" with {"name":"HOME"} (${n})`);
    expect((await turn.settled).status).toBe("completed");
  }
  const all = await events(session);
  const warnings = all
    .filter((e) => e.type === "harness.warning")
    .map((e) => (e.data as { message: string }).message);
  expect(warnings).toEqual([
    expect.stringMatching(
      /^mcp_servers\.fx\.args\[2\] puts a credential \(--api-key\) on the command line, where every local user can read it .*Brain starts MCP server "fx" with it\. Give it to the server in mcp_servers\.fx\.env instead/,
    ),
    expect.stringMatching(
      /^mcp_servers\.hdr\.args\[2\] puts a credential \(Authorization\) on the command line/,
    ),
  ]);
  expect(all.some((e) => e.type === "tool.result")).toBe(true);
  expect(JSON.stringify(all)).not.toContain(key);
  expect(JSON.stringify(all)).not.toContain("written-out-4567");
});
