// POST /v1/sessions/{id}/handoff: a client names a harness (and a model), the daemon makes the linked session.
// POST /v1/sessions/{id}/rebuild: the REST twin of `brain sessions rebuild ID`.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinCatalog, catalogHarnesses } from "../harnesses/catalog.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, raw, settled, textOf } from "../testing/http.js";

let t: TestDaemon;
beforeAll(async () => {
  t = await startTestDaemon();
});
afterAll(async () => {
  await t.cleanup();
});

describe("POST /v1/sessions/{id}/handoff", () => {
  it("makes a linked session whose first prompt carries the conversation; refuses bad input by field", async () => {
    const client = t.client();
    const created = await raw(t.url, "POST", "/v1/sessions", {
      token: t.tokens.admin,
      body: { harness: "echo" },
    });
    const id = created.body.id as string;
    await collect(client, id, settled((await client.prompt(id, "remember PAPAYA")).turn));
    const res = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.admin,
      body: { to: "echo" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.handoff_from).toEqual({ session: id, seq: expect.any(Number) });
    // The echo runner's native format is not one Brain writes: the history goes as a marked summary.
    expect(res.body.seeded).toEqual({ how: "summary", seq: 0 });
    const moved = res.body.id as string;
    const reply = await collect(client, moved, settled((await client.prompt(moved, "go on")).turn));
    expect(textOf(reply)).toContain("User: remember PAPAYA");
    expect(textOf(reply)).toContain("Assistant: echo #1: remember PAPAYA");

    const unknown = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.admin,
      body: { to: "nope" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ field: "to" });
    const extra = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.admin,
      body: { to: "echo", options: { cwd: "/" } },
    });
    expect(extra.status).toBe(400);
    const otherTenant = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.other,
      body: { to: "echo" },
    });
    expect(otherTenant.status).toBe(404);
  });
});

describe("a handoff asked for by a client", () => {
  // Families that keep cwd and native mode for the operator (the CLIs), the runners that let clients set any
  // option, an agent in "bound" mode and one with an operator-set working directory; a second daemon whose
  // defaults are "bound". Nothing here starts a CLI: a session's harness starts with its first prompt.
  let dir: string;
  let agents: TestDaemon;
  let bound: TestDaemon;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "brain-handoff-limits-"));
    const { factories } = catalogHarnesses(builtinCatalog(), { config: {}, configDir: dir, brainHome: dir });
    const defined: Record<string, { harness: string; config: object }> = {
      reviewer: { harness: "claude-code", config: { tool_mode: "bound" } },
      "in-repo": { harness: "claude-code", config: { options: { cwd: dir } } },
    };
    [agents, bound] = await Promise.all([
      startTestDaemon({
        factories,
        agents: {
          list: async () => Object.keys(defined).map((id) => ({ id })),
          resolve: async (id) => defined[id],
        },
      }),
      startTestDaemon({ factories, defaults: { tool_mode: "bound" } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([agents?.cleanup(), bound?.cleanup()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const as = (d: TestDaemon) => ({
    create: async (body: object) => {
      const res = await raw(d.url, "POST", "/v1/sessions", { token: d.tokens.other, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    },
    handoff: (id: string, to: string) =>
      raw(d.url, "POST", `/v1/sessions/${id}/handoff`, { token: d.tokens.other, body: { to } }),
  });

  it("keeps the source's bound tool mode, on its own family and another", async () => {
    const tenant = as(agents);
    const id = await tenant.create({ agent: "reviewer" });
    for (const to of ["claude-code", "codex"]) {
      const res = await tenant.handoff(id, to);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.config).toMatchObject({ tool_mode: "bound" });
    }
  });

  it("applies the operator's defaults for the target: a native source moves only to its own family", async () => {
    const tenant = as(bound);
    const id = await tenant.create({ harness: "echo" });
    const moved = await tenant.handoff(id, "claude-code");
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    expect(moved.body.config).toMatchObject({ tool_mode: "bound" });
    // Native by the operator's own hand (its CLI): a client's create could not ask for that here.
    const native = await bound.brain.create({
      harness: "echo",
      config: { tool_mode: "native" },
      tenant: "acme",
    });
    const refused = await tenant.handoff(native.id, "claude-code");
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      field: "to",
      message: expect.stringContaining('field "config.tool_mode"'),
    });
    const same = await tenant.handoff(native.id, "echo");
    expect(same.status, JSON.stringify(same.body)).toBe(201);
    expect(same.body.config).toMatchObject({ tool_mode: "native" });
  });

  it("carries a working directory to another family only when the operator set it", async () => {
    const tenant = as(agents);
    // A runner lets a client set any option: its cwd is the client's, which claude-code keeps for the operator.
    const runner = await tenant.create({ harness: "echo", config: { options: { cwd: "/" } } });
    const refused = await tenant.handoff(runner, "claude-code");
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      field: "to",
      message: expect.stringContaining('field "config.options.cwd": set by the operator only'),
    });
    const sameRunner = await tenant.handoff(runner, "echo");
    expect(sameRunner.status).toBe(201);
    expect(sameRunner.body.config).toMatchObject({ options: { cwd: "/" } });

    const repo = await tenant.create({ agent: "in-repo" });
    for (const to of ["codex", "claude-code"]) {
      const res = await tenant.handoff(repo, to);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.config).toEqual({ options: { cwd: dir } });
    }
  });
});

describe("POST /v1/sessions/{id}/rebuild", () => {
  it("rewrites a session's native state from its log: the next prompt carries the history", async () => {
    const client = t.client();
    const id = (await client.create({ harness: "echo" })).id;
    await collect(client, id, settled((await client.prompt(id, "remember MANGO")).turn));
    const native = join(t.home, "sessions", id, "native");
    expect(readdirSync(native)).toContain("echo.jsonl");

    const res = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Brain cannot write the echo runner's own file: the history goes as a marked summary in the next prompt.
    expect(res.body).toEqual({
      id,
      seeded: { how: "summary", seq: expect.any(Number) },
      aside: expect.stringMatching(/^native-before-rebuild-/),
    });
    // The old files are kept, in the session's directory; the native dir starts empty.
    expect(readdirSync(join(t.home, "sessions", id, res.body.aside as string))).toContain("echo.jsonl");
    expect(readdirSync(native)).not.toContain("echo.jsonl");
    expect((await client.session(id)).seeded?.how).toBe("summary");

    const reply = await collect(client, id, settled((await client.prompt(id, "go on")).turn));
    expect(textOf(reply)).toContain("User: remember MANGO");
    expect(textOf(reply)).toContain("Assistant: echo #1: remember MANGO");
    // Once a turn after the rebuild is answered, prompts go as they are.
    const plain = (await client.prompt(id, "plain")).turn;
    const next = await collect(client, id, settled(plain));
    expect(textOf(next.filter((e) => e.turn === plain))).toBe("echo #2: plain");

    const viaClient = await client.rebuild(id);
    expect(viaClient.seeded.how).toBe("summary");
  });

  it("refuses an unknown session, a stray field, another tenant, a running turn and a session held elsewhere", async () => {
    const client = t.client();
    const unknown = await raw(t.url, "POST", "/v1/sessions/no-such-session/rebuild", {
      token: t.tokens.admin,
    });
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.body)).toContain("no session");

    const id = (await client.create({ harness: "echo", config: { options: { delay_ms: 200 } } })).id;
    const extra = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, {
      token: t.tokens.admin,
      body: { harness: "echo" },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatchObject({ field: "harness" });
    const otherTenant = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.other });
    expect(otherTenant.status).toBe(404);

    const { turn } = await client.prompt(id, "a b c d e f g h i j k l m n o p q r s t u v w x y z");
    const running = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.admin });
    expect(running.status).toBe(409);
    expect(JSON.stringify(running.body)).toMatch(/still running: wait for it before a rebuild/);
    await client.interrupt(id);
    await collect(client, id, settled(turn));

    // Another process (a `brain run` on another machine sharing the home) has the session's log open.
    await client.close(id);
    writeFileSync(
      join(t.home, "sessions", id, "events.jsonl.lock"),
      `${JSON.stringify({ kind: "cli", pid: 4242, host: "elsewhere.example", nonce: "theirs" })}\n`,
    );
    const held = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.admin });
    expect(held.status).toBe(409);
    expect(JSON.stringify(held.body)).toMatch(/pid 4242 on elsewhere\.example/);
    // Nothing was moved: the session's files are as they were.
    expect(readdirSync(join(t.home, "sessions", id)).some((f) => f.startsWith("native-before"))).toBe(false);
  });
});
