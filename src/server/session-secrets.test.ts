// An error body about a session is redacted with what that session's log redacts, not only with the host's
// secrets: a harness tells its session secrets the host never knew (an extension host's NUI_API_URL token), and
// its errors can quote them.
import { inspect } from "node:util";
import { afterEach, expect, it } from "vitest";
import { HarnessError, type HarnessFactory } from "../core/harness.js";
import { ApiHarnessFactory } from "../harnesses/api/factory.js";
import { quietHarness } from "../testing/brain.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { newSession, raw } from "../testing/http.js";

const TOKEN = "sessions-own-token-0123456789";

/** Tells its session TOKEN as it opens, and fails a checkpoint quoting it (as a host's error would). */
const telling: HarnessFactory = {
  name: "telling",
  supportsSteering: false,
  async open(options) {
    options.secret?.({ name: "NUI_API_URL token", value: TOKEN });
    return quietHarness({
      checkpoint: async () => {
        throw new HarnessError("brain_error", `could not reach http://127.0.0.1:1/${TOKEN}/api/hitl`);
      },
    });
  },
};

let t: TestDaemon | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

it("a session's error body never carries a secret its harness told it", async () => {
  t = await startTestDaemon({ factories: [telling] });
  const id = await newSession(t, { harness: "telling" });
  const res = await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: t.tokens.admin });
  expect(res.status).toBe(500);
  expect(JSON.stringify(res.body)).not.toContain(TOKEN);
  expect(res.body).toEqual({
    error: {
      code: "brain_error",
      message: "could not reach http://127.0.0.1:1/[redacted:NUI_API_URL token]/api/hitl",
    },
  });
});

/** Fails a checkpoint with TOKEN deep in the error: in its stack (read before any redaction), cause and members. */
const deep: HarnessFactory = {
  name: "deep",
  supportsSteering: false,
  async open(options) {
    options.secret?.({ name: "NUI_API_URL token", value: TOKEN });
    return quietHarness({
      checkpoint: async () => {
        const reach = new Error(`GET http://127.0.0.1:1/${TOKEN}/api: refused`);
        const retry = new AggregateError([reach, `tried ${TOKEN} twice`], "every try failed");
        const err = new HarnessError("brain_error", `checkpoint via ${TOKEN} failed`);
        // As `new Error(message, {cause})` sets it: own, not enumerable.
        Object.defineProperty(err, "cause", { value: retry, writable: true, configurable: true });
        // What a harness that logs its error before rethrowing it does: the stack now holds the message.
        expect(err.stack).toContain(TOKEN);
        throw Object.assign(err, { stderr: `token=${TOKEN}` });
      },
    });
  },
};

it("the daemon's log line of a 5xx never carries a session's secret, in its stack, causes or members", async () => {
  const logged: string[] = [];
  // What `brain serve` prints of it (the host's redactor does not know the session's token).
  t = await startTestDaemon({ factories: [deep], onError: (err) => logged.push(inspect(err)) });
  const id = await newSession(t, { harness: "deep" });
  const res = await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: t.tokens.admin });
  expect(res.status).toBe(500);
  expect(logged).toHaveLength(1);
  const line = logged[0]!;
  for (const shown of ["checkpoint via", "every try failed", "GET http://127.0.0.1:1/", "tried", "token="])
    expect(line).toContain(shown);
  expect(line).not.toContain(TOKEN);
  expect(JSON.stringify(res.body)).not.toContain(TOKEN);
});

it("a session's view never shows a key its provider's base URL carries, which its log keeps out", async () => {
  const key = "gw-key-in-the-url-0123456789";
  const base_url = `http://127.0.0.1:1/v1?key=${key}`;
  t = await startTestDaemon({ defaults: { provider: { api: "openai", base_url } } });
  const created = await raw(t.url, "POST", "/v1/sessions", {
    token: t.tokens.admin,
    body: { harness: "echo" },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const shown = await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.admin });
  const log = await raw(t.url, "GET", `/v1/sessions/${id}/log`, { token: t.tokens.admin });
  for (const answer of [created, shown, log]) expect(JSON.stringify(answer.body)).not.toContain(key);
  expect(shown.body.provider).toEqual({
    api: "openai",
    base_url: "http://127.0.0.1:1/v1?key=[redacted:key]",
  });
});

it("a session's view and log never show a credential its agent definition's aiAssets.mcpServers write out", async () => {
  const secret = "ghp-literal-in-the-agent-0123456789";
  const mcp_servers = [
    { name: "gh", url: "https://mcp.example/", headers: { Authorization: `Bearer ${secret}` } },
    { name: "db", command: "db-mcp", env: { DB_PASSWORD: `${secret}-db` } },
  ];
  const agent = { harness: "echo", config: { options: { agent: "gh", mcp_servers } } };
  t = await startTestDaemon({
    agents: { list: async () => [{ id: "gh" }], resolve: async (id) => (id === "gh" ? agent : undefined) },
  });
  const created = await raw(t.url, "POST", "/v1/sessions", { token: t.tokens.admin, body: { agent: "gh" } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const log = await raw(t.url, "GET", `/v1/sessions/${created.body.id}/log`, { token: t.tokens.admin });
  for (const answer of [created, log]) expect(JSON.stringify(answer.body)).not.toContain(secret);
  expect(created.body.config).toMatchObject({
    options: {
      mcp_servers: [
        { headers: { Authorization: "[redacted:Authorization]" } },
        { env: { DB_PASSWORD: "[redacted:DB_PASSWORD]" } },
      ],
    },
  });
});

it("a session's view and log never show a gateway credential its agent definition's api headers carry", async () => {
  // What an operator puts on an api agent for the gateway in front of its provider (Portkey, Cloudflare's AI
  // Gateway, Helicone): a tenant naming the agent read them back in its session's view.
  const secret = "gw-credential-in-the-agent-0123456789";
  const headers = {
    "x-portkey-api-key": `${secret}-portkey`,
    "cf-aig-authorization": `Bearer ${secret}-cf`,
    "Helicone-Auth": `Bearer ${secret}-helicone`,
    Authorization: `Bearer ${secret}-plain`,
    "x-portkey-provider": "openai",
  };
  const agent = { harness: "api", config: { model: "ollama:llama3.2", options: { headers } } };
  t = await startTestDaemon({
    factories: [new ApiHarnessFactory()],
    defaults: { provider: { api: "ollama", base_url: "http://127.0.0.1:1" } },
    agents: { list: async () => [{ id: "gw" }], resolve: async (id) => (id === "gw" ? agent : undefined) },
  });
  const created = await raw(t.url, "POST", "/v1/sessions", { token: t.tokens.other, body: { agent: "gw" } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const path = `/v1/sessions/${created.body.id}`;
  const shown = await raw(t.url, "GET", path, { token: t.tokens.other });
  const log = await raw(t.url, "GET", `${path}/log`, { token: t.tokens.other });
  for (const answer of [created, shown, log]) expect(JSON.stringify(answer.body)).not.toContain(secret);
  expect((shown.body.config as { options: unknown }).options).toEqual({
    headers: {
      "x-portkey-api-key": "[redacted:x-portkey-api-key]",
      "cf-aig-authorization": "[redacted:cf-aig-authorization]",
      "Helicone-Auth": "[redacted:Helicone-Auth]",
      Authorization: "[redacted:Authorization]",
      "x-portkey-provider": "openai",
    },
  });
});

it("a session's view and log never show a password in a URL its agent definition's env or MCP servers hold", async () => {
  const password = "pw-in-a-connection-url-0123456789";
  const env = { DATABASE_URL: `postgres://app:${password}@db.internal:5432/app`, LOG_LEVEL: "debug" };
  const mcp_servers = [
    { name: "db", command: "db-mcp", env: { REDIS_URL: `redis://:${password}-r@cache:6379` } },
  ];
  const agent = { harness: "echo", config: { options: { env, mcp_servers } } };
  t = await startTestDaemon({
    agents: { list: async () => [{ id: "db" }], resolve: async (id) => (id === "db" ? agent : undefined) },
  });
  const created = await raw(t.url, "POST", "/v1/sessions", { token: t.tokens.other, body: { agent: "db" } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const path = `/v1/sessions/${created.body.id}`;
  const shown = await raw(t.url, "GET", path, { token: t.tokens.other });
  const log = await raw(t.url, "GET", `${path}/log`, { token: t.tokens.other });
  for (const answer of [created, shown, log]) expect(JSON.stringify(answer.body)).not.toContain(password);
  expect((shown.body.config as { options: { env: unknown } }).options.env).toEqual({
    DATABASE_URL: "postgres://app:[redacted:url_password]@db.internal:5432/app",
    LOG_LEVEL: "debug",
  });
});

it("a session's view and log never show a credential its MCP servers' command-line arguments write out", async () => {
  // What a server's README has one write (`--api-key KEY`, `--token=KEY`, mcp-remote's `--header "Authorization:
  // Bearer KEY"`): a tenant naming the agent read them back in its session's view, as the args were not looked at.
  const secret = "arg-credential-in-the-agent-0123456789";
  const args = [
    "--api-key",
    `${secret}-flag`,
    `--token=${secret}-eq`,
    "--header",
    `Authorization: Bearer ${secret}-header`,
    `https://u:${secret}-url@mcp.example/`,
    "--verbose",
    "plain-word",
  ];
  const agent = {
    harness: "echo",
    config: { options: { mcp_servers: [{ name: "gh", command: "gh-mcp", args }] } },
  };
  t = await startTestDaemon({
    agents: { list: async () => [{ id: "gh" }], resolve: async (id) => (id === "gh" ? agent : undefined) },
  });
  const created = await raw(t.url, "POST", "/v1/sessions", { token: t.tokens.other, body: { agent: "gh" } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const path = `/v1/sessions/${created.body.id}`;
  const shown = await raw(t.url, "GET", path, { token: t.tokens.other });
  const log = await raw(t.url, "GET", `${path}/log`, { token: t.tokens.other });
  for (const answer of [created, shown, log]) expect(JSON.stringify(answer.body)).not.toContain(secret);
  const [server] = (shown.body.config as { options: { mcp_servers: { args: string[] }[] } }).options
    .mcp_servers;
  expect(server?.args).toEqual([
    "--api-key",
    "[redacted:--api-key]",
    "--token=[redacted:--token]",
    "--header",
    "Authorization: [redacted:Authorization]",
    "https://u:[redacted:url_password]@mcp.example/",
    "--verbose",
    "plain-word",
  ]);
});
