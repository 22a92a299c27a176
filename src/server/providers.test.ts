// A daemon's clients choose among the providers the operator configured, by name: never a URL and a variable of
// their own (which would send any of the daemon's environment to any server), and a refusal that says nothing
// about which variables exist. Tokens may be limited to some providers; GET /v1/providers says which.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainClient } from "../client/client.js";
import { Brain } from "../core/brain.js";
import { HarnessRegistry } from "../core/registry.js";
import { ApiHarnessFactory } from "../harnesses/api/factory.js";
import { FsSessionStore } from "../store/fs/index.js";
import { tempDir } from "../testing/brain.js";
import { type FakeProvider, startFakeProvider } from "../testing/fake-provider/index.js";
import { collect, raw, settled } from "../testing/http.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { newToken } from "./auth/tokens.js";
import { type Daemon, startDaemon } from "./daemon.js";

const KEY = "sk-operator-key-0123456789";
const DB_PASSWORD = "db-password-never-leaves-9876";

let provider: FakeProvider;
let daemon: Daemon;
let brain: Brain;
let home: string;
const tokens = { admin: newToken(), limited: newToken(), none: newToken(), zeta: newToken() };

beforeAll(async () => {
  provider = await startFakeProvider();
  home = tempDir();
  const store = new FsSessionStore(home);
  brain = new Brain({
    store,
    harnesses: new HarnessRegistry([new ApiHarnessFactory()]),
    tools: new ToolRouter([new BuiltinTools()]),
    env: { OPERATOR_KEY: KEY, DB_PASSWORD },
    providers: {
      fake: { api: "openai-chat", base_url: `${provider.url}/v1`, api_key_env: "OPERATOR_KEY" },
      other: { api: "openai-chat", base_url: `${provider.url}/v1`, api_key_env: "UNSET_KEY" },
    },
    secrets: Object.values(tokens).map((value) => ({ name: "token", value })),
  });
  daemon = await startDaemon({
    brain,
    port: 0,
    tokens: [
      { token: tokens.admin, tenant: "default", role: "controller" },
      { token: tokens.limited, tenant: "acme", role: "controller", providers: ["fake"] },
      { token: tokens.none, tenant: "zeta", role: "controller", providers: [] },
      { token: tokens.zeta, tenant: "zeta", role: "controller" },
    ],
    defaults: { provider: "fake", model: "fake-model" },
  });
});
afterAll(async () => {
  await daemon.close();
  await brain.close();
  await provider.close();
  rmSync(home, { recursive: true, force: true });
});

const create = (token: string, body: Record<string, unknown>) =>
  raw(daemon.url, "POST", "/v1/sessions", { token, body: { harness: "api", ...body } });

describe("choosing a provider over REST", () => {
  it("refuses inline settings: no URL and variable of the client's choosing reach a provider", async () => {
    for (const api_key_env of ["DB_PASSWORD", "OPERATOR_KEY"]) {
      const res = await create(tokens.admin, { provider: { base_url: `${provider.url}/v1`, api_key_env } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "bad_request", field: "provider" });
      expect(JSON.stringify(res.body)).toContain("GET /v1/providers");
    }
    expect(provider.requests).toEqual([]);
    expect((await brain.list()).length).toBe(0);
  });

  it("answers an unknown name the same whether or not a variable of that name exists", async () => {
    const exists = await create(tokens.admin, { provider: "DB_PASSWORD" });
    const missing = await create(tokens.admin, { provider: "NO_SUCH_VAR" });
    expect(exists.status).toBe(400);
    expect(missing.status).toBe(400);
    const message = (r: typeof exists) => (r.body.error as { message: string }).message;
    expect(message(exists).replace("DB_PASSWORD", "X")).toBe(message(missing).replace("NO_SUCH_VAR", "X"));
    expect(message(exists)).toContain("this token may use: fake, other");
  });

  it("lists the providers a token may use, without URLs, variable names or keys", async () => {
    const all = await raw(daemon.url, "GET", "/v1/providers", { token: tokens.admin });
    expect(all.body).toEqual({
      providers: [
        { name: "fake", api: "openai-chat", default: true },
        { name: "other", api: "openai-chat" },
      ],
    });
    const limited = await raw(daemon.url, "GET", "/v1/providers", { token: tokens.limited });
    expect(limited.body).toEqual({ providers: [{ name: "fake", api: "openai-chat", default: true }] });
    expect(JSON.stringify([all.body, limited.body])).not.toMatch(/OPERATOR_KEY|127\.0\.0\.1|sk-/);
  });

  it("keeps a limited token to its providers, the default included", async () => {
    const other = await create(tokens.limited, { provider: "other" });
    expect(other.status).toBe(400);
    expect((other.body.error as { message: string }).message).toContain("this token may use: fake");
    const byDefault = await create(tokens.none, {});
    expect(byDefault.status).toBe(400);
    expect((byDefault.body.error as { message: string }).message).toContain(
      "this token may use: no provider",
    );
  });

  it("does not name the variable of a configured provider whose key is unset", async () => {
    const res = await create(tokens.admin, { provider: "other" });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).not.toContain("UNSET_KEY");
    expect((res.body.error as { message: string }).message).toContain('provider "other" has no API key');
    expect((await brain.list()).length).toBe(0);
  });

  it("runs a session on a named provider with the operator's key, and keeps the key out of its log", async () => {
    provider.script([{ error: { status: 401, message: `Incorrect API key provided: ${KEY}` } }]);
    const res = await create(tokens.limited, { provider: "fake" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.provider).toBe("fake");
    const id = res.body.id as string;
    const client = new BrainClient({ url: daemon.url, token: tokens.limited });
    const { turn } = await client.prompt(id, "hi");
    const seen = await collect(client, id, settled(turn));
    expect(seen.at(-1)?.data).toMatchObject({ status: "failed" });
    expect(provider.requests.at(-1)?.headers.authorization).toBe(`Bearer ${KEY}`);
    const file = readFileSync(join(home, "sessions", id, "events.jsonl"), "utf8");
    expect(file).toContain("[redacted:OPERATOR_KEY]");
    expect(file).not.toContain(KEY);
    expect(JSON.stringify(seen)).not.toContain(KEY);
  });

  it("lets no client put its own headers on the operator's key (its organisation, project, or a gateway's route)", async () => {
    // The credential proxy drops these from a CLI's requests; the api harness sent a client's options.headers on.
    const headers = { "OpenAI-Project": "proj_another_team", "OpenAI-Organization": "org-another" };
    const res = await create(tokens.limited, { provider: "fake", config: { options: { headers } } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request", field: "config.options.headers" });
    expect((res.body.error as { message: string }).message).toContain("set by the operator only");
    expect(provider.requests.some((r) => "openai-project" in r.headers)).toBe(false);
  });

  it("lets no client set the price its sessions' usage.cost is counted at: the operator may bill on it", async () => {
    const before = (await brain.list()).length;
    const price = { input: 0, output: 0 };
    const res = await create(tokens.limited, { provider: "fake", config: { options: { price } } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request", field: "config.options.price" });
    const { message } = res.body.error as { message: string };
    expect(message).toContain('field "config.options.price": set by the operator only on harness "api"');
    expect(message).toContain("usage.cost");
    expect(message).not.toMatch(/clients may set: [^)]*price/);
    expect((await brain.list()).length).toBe(before);
  });

  it("keeps a limited token to its providers in a fork, as in a handoff: no forking its tenant's session onto another", async () => {
    const made = await create(tokens.zeta, {});
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as string;
    const path = `/v1/sessions/${id}`;
    expect((await raw(daemon.url, "POST", `${path}/checkpoints`, { token: tokens.zeta })).status).toBe(201);
    const before = (await brain.list()).length;
    const handoff = await raw(daemon.url, "POST", `${path}/handoff`, {
      token: tokens.none,
      body: { to: "api" },
    });
    expect(handoff.status).toBe(400);
    const fork = await raw(daemon.url, "POST", `${path}/fork`, { token: tokens.none, body: {} });
    expect(fork.status).toBe(400);
    expect(fork.body.error).toMatchObject({ code: "bad_request" });
    expect((fork.body.error as { message: string }).message).toBe(
      `session ${id} runs on provider "fake", which its fork would keep, and this token may use: no provider (GET /v1/providers); fork it with a token that may use its provider, or create a session on one of these`,
    );
    expect((await brain.list()).length).toBe(before);
    const allowed = await raw(daemon.url, "POST", `${path}/fork`, { token: tokens.zeta, body: {} });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);
    expect(allowed.body.provider).toBe("fake");
  });

  it("is described in /openapi.json: provider is a name, and GET /v1/providers is a route", async () => {
    const doc = (await raw(daemon.url, "GET", "/openapi.json")).body as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >;
    };
    expect(doc.paths["/v1/providers"]?.get).toBeDefined();
    const create = doc.paths["/v1/sessions"]!.post!.requestBody!.content["application/json"]!.schema as {
      properties: Record<string, { type?: string }>;
    };
    expect(create.properties.provider).toMatchObject({ type: "string" });
  });
});

// The daemon's own environment holds vendor keys and points the vendors' base URLs at a capture server: nothing
// a client sends (a model prefix, a handoff's model, leaving the provider out) may make a request carry them.
describe("the daemon's own provider variables", () => {
  const HOST_KEY = "sk-daemon-own-openai-key-0123";
  const ANTHROPIC_KEY = "sk-ant-configured-key-4567";
  const saved = { ...process.env };
  const tenant = { admin: newToken(), local: newToken() };
  let capture: FakeProvider;
  let hostDaemon: Daemon;
  let hostBrain: Brain;
  let hostHome: string;

  beforeAll(async () => {
    capture = await startFakeProvider();
    Object.assign(process.env, {
      OPENAI_API_KEY: HOST_KEY,
      OPENAI_BASE_URL: `${capture.url}/v1`,
      ANTHROPIC_API_KEY: HOST_KEY,
      ANTHROPIC_BASE_URL: capture.url,
      OLLAMA_API_KEY: HOST_KEY,
    });
    hostHome = tempDir();
    // Built as `brain serve` builds it: the api factory of the catalog, no providerEnv.
    hostBrain = new Brain({
      store: new FsSessionStore(hostHome),
      harnesses: new HarnessRegistry([new ApiHarnessFactory()]),
      tools: new ToolRouter([new BuiltinTools()]),
      env: { ANTH_KEY: ANTHROPIC_KEY },
      providers: {
        local: { api: "ollama", base_url: capture.url },
        anth: { api: "anthropic", base_url: capture.url, api_key_env: "ANTH_KEY" },
      },
    });
    hostDaemon = await startDaemon({
      brain: hostBrain,
      port: 0,
      tokens: [
        { token: tenant.admin, tenant: "default", role: "controller" },
        { token: tenant.local, tenant: "acme", role: "controller", providers: ["local"] },
      ],
      defaults: { options: { retries: 0 } },
    });
  });
  afterAll(async () => {
    await hostDaemon.close();
    await hostBrain.close();
    await capture.close();
    rmSync(hostHome, { recursive: true, force: true });
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  });

  const createOn = (token: string, body: Record<string, unknown>) =>
    raw(hostDaemon.url, "POST", "/v1/sessions", { token, body: { harness: "api", ...body } });

  /** Prompts session `id` and returns its turn's outcome. */
  async function turnOf(token: string, id: string) {
    const client = new BrainClient({ url: hostDaemon.url, token });
    const { turn } = await client.prompt(id, "hi");
    const seen = await collect(client, id, settled(turn));
    return seen.at(-1)?.data as { status: string; error?: { message: string } };
  }

  const carriedHostKey = () => capture.requests.some((r) => JSON.stringify(r.headers).includes(HOST_KEY));

  it("refuses a restricted token's session that names no provider when the host has no default", async () => {
    const res = await createOn(tenant.local, { config: { model: "openai-chat:gpt-4o" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request", field: "provider" });
    expect((res.body.error as { message: string }).message).toMatch(
      /required for this token \(this host has no default provider\).*this token may use: local/,
    );
    expect(capture.requests).toEqual([]);
  });

  it("never sends the daemon's key to a keyless provider, whatever the model's prefix", async () => {
    const res = await createOn(tenant.local, { provider: "local", config: { model: "openai:gpt-4o" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const outcome = await turnOf(tenant.local, res.body.id as string);
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toContain('model "openai:gpt-4o" asks for openai');
    expect(outcome.error?.message).toContain('speaks "ollama"');
    expect(capture.requests).toEqual([]);
  });

  it("does not send a configured provider's key to another vendor (model prefix or handoff)", async () => {
    const res = await createOn(tenant.admin, { provider: "anth", config: { model: "openai:gpt-4o" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await turnOf(tenant.admin, res.body.id as string)).error?.message).toContain(
      'the session\'s provider speaks "anthropic"',
    );
    const source = await createOn(tenant.admin, { provider: "anth", config: { model: "claude-x" } });
    const handoff = await raw(hostDaemon.url, "POST", `/v1/sessions/${source.body.id}/handoff`, {
      token: tenant.admin,
      body: { to: "api", model: "gemini:gemini-x" },
    });
    expect(handoff.status, JSON.stringify(handoff.body)).toBe(201);
    expect((await turnOf(tenant.admin, handoff.body.id as string)).status).toBe("failed");
    expect(capture.requests).toEqual([]);
  });

  it("gives a session naming no provider none of the daemon's keys", async () => {
    const res = await createOn(tenant.admin, { config: { model: "openai:gpt-4o" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const outcome = await turnOf(tenant.admin, res.body.id as string);
    expect(outcome.error?.message).toContain("no API key for openai");
    expect(outcome.error?.message).toContain("can come only from its provider");
    expect(capture.requests).toEqual([]);
  });

  it("runs a keyless provider on its own endpoint with no key at all", async () => {
    capture.script([{ text: "local answer" }]);
    const res = await createOn(tenant.local, { provider: "local", config: { model: "ollama:llama3.2" } });
    expect((await turnOf(tenant.local, res.body.id as string)).status).toBe("completed");
    expect(capture.requests.map((r) => r.path)).toEqual(["/api/chat"]);
    expect(capture.requests[0]?.headers.authorization).toBeUndefined();
    expect(carriedHostKey()).toBe(false);
  });
});
