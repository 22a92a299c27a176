// Secrets an operator writes out in a session's MCP servers (an `env` token, an Authorization header) instead of
// as `${VAR}`: the server runs with them, and no client's view of the session nor its log shows them.
import { afterEach, expect, it } from "vitest";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { mcpSessionTools } from "./index.js";
import { fixtureStdio } from "./testing/servers.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

it("shows secrets written out in a server's env or headers to no client and no log, yet runs with them", async () => {
  t = makeBrain({ sessionTools: mcpSessionTools({ baseDir: process.cwd(), env: {} }), env: {} });
  const token = "ghp_written_out_1234";
  const session = await t.brain.create({
    harness: "echo",
    mcp_servers: {
      fx: fixtureStdio({ env: { GITHUB_TOKEN: token, PLAIN_SETTING: "kept-as-is" } }),
      web: {
        url: "http://127.0.0.1:9/mcp",
        headers: { Authorization: "Bearer written-out-5678", Accept: "text/plain" },
      },
    },
  });
  const record = await t.brain.record(session.id);
  expect(t.brain.shownRecord(record).mcp_servers).toEqual({
    fx: expect.objectContaining({
      env: { GITHUB_TOKEN: "[redacted:GITHUB_TOKEN]", PLAIN_SETTING: "kept-as-is" },
    }),
    web: expect.objectContaining({
      headers: { Authorization: "[redacted:Authorization]", Accept: "text/plain" },
    }),
  });
  expect(record.mcp_servers?.fx?.env?.GITHUB_TOKEN).toBe(token);
  // The server got the token: the log shows its answer redacted.
  await (await session.prompt('call the tool "fx__env" with {"name":"GITHUB_TOKEN"}')).settled;
  const all = await events(session);
  const result = all.find((e) => e.type === "tool.result")?.data as { content: { text: string }[] };
  expect(result.content[0]?.text).toBe("[redacted:GITHUB_TOKEN]");
  expect(JSON.stringify(all)).not.toContain(token);
});

it("keeps the credential of a written-out Authorization header out of the log without its scheme too", async () => {
  t = makeBrain({ sessionTools: mcpSessionTools({ baseDir: process.cwd(), env: {} }), env: {} });
  const credential = "tok-written-out-0123456789";
  const session = await t.brain.create({
    harness: "echo",
    mcp_servers: {
      web: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: `Bearer ${credential}` } },
    },
  });
  // As a server's refusal quotes it (echo answers with the text it was sent).
  await (await session.prompt(`401: token ${credential} is not valid`)).settled;
  const all = JSON.stringify(await events(session));
  expect(all).not.toContain(credential);
  expect(all).toContain("token [redacted:Authorization] is not valid");
});

it("shows no key written out under a hyphenated header name or in a server's URL", async () => {
  t = makeBrain({ sessionTools: mcpSessionTools({ baseDir: process.cwd(), env: {} }), env: {} });
  const session = await t.brain.create({
    harness: "echo",
    mcp_servers: {
      web: {
        url: "https://mcp:url-pass-9012@127.0.0.1:9/mcp?region=eu&api_key=query-key-3456",
        headers: { "x-api-key": "hyphen-key-1234", "X-Goog-Api-Key": "goog-key-5678", Accept: "text/plain" },
      },
    },
  });
  const shown = t.brain.shownRecord(await t.brain.record(session.id)).mcp_servers?.web;
  expect(shown?.headers).toEqual({
    "x-api-key": "[redacted:x-api-key]",
    "X-Goog-Api-Key": "[redacted:X-Goog-Api-Key]",
    Accept: "text/plain",
  });
  expect(shown?.url).toBe(
    "https://mcp:[redacted:url_password]@127.0.0.1:9/mcp?region=eu&api_key=[redacted:api_key]",
  );
});
