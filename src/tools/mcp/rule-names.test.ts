// Permission rules for MCP tools are matched against the tools' session names (`fx__odd_name` for the server's
// `odd.name`): a rule written with a name no session tool can have would never apply, so it is refused when the
// session is made, naming the rule and the name to write.
import { expect, it } from "vitest";
import { apiTestBed } from "../../harnesses/api/testing/bed.js";
import type { PermissionPolicy } from "../../protocol/permissions.js";
import { events, tempDir } from "../../testing/brain.js";
import { mcpSessionTools } from "./index.js";
import { fixtureStdio } from "./testing/servers.js";

const bed = apiTestBed();

function apiSession(policies: { permissions?: PermissionPolicy; client_permissions?: PermissionPolicy }) {
  const { brain } = bed.brain({ sessionTools: mcpSessionTools({ baseDir: tempDir(), env: {} }) });
  return brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", options: { retry_base_ms: 1 } },
    mcp_servers: { fx: fixtureStdio() },
    ...policies,
  });
}

it("refuses a rule naming an MCP tool by the server's own name, and says the name to write", async () => {
  await expect(apiSession({ permissions: { tools: { "fx__odd.name": "deny" } } })).rejects.toMatchObject({
    code: "bad_request",
    field: "permissions.tools",
    message: expect.stringMatching(/rule "fx__odd\.name" can never match: .*write it as "fx__odd_name"/),
  });
  await expect(
    apiSession({ client_permissions: { tools: { "fx__odd.*": "deny", echo: "allow" } } }),
  ).rejects.toMatchObject({
    field: "client_permissions.tools",
    message: expect.stringMatching(/write it as "fx__odd_\*"/),
  });
  const long = `fx__${"a".repeat(70)}`;
  await expect(apiSession({ permissions: { tools: { [long]: "deny" } } })).rejects.toMatchObject({
    message: expect.stringMatching(/longer than the 64 characters .*write it as "fx__a{60}"/),
  });
});

it("denies the tool when the rule uses its session name", async () => {
  const session = await apiSession({ permissions: { tools: { fx__odd_name: "deny", "fx__*": "allow" } } });
  bed.fake.script([{ toolCalls: [{ name: "fx__odd_name", arguments: {} }] }, { text: "done" }]);
  expect((await (await session.prompt("use it")).settled).status).toBe("completed");
  const result = (await events(session)).find((e) => e.type === "tool.result");
  expect(result?.data).toMatchObject({
    is_error: true,
    content: [{ text: expect.stringMatching(/permission to run tool "fx__odd_name" was denied/) }],
  });
});
