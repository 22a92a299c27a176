// The daemon's routes for a session's life after its turns, over real HTTP on loopback: checkpoints, forks,
// restore, close and delete; the OpenAPI document; sessions made from agent definitions.

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled, textOf } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";
import { homeAgents } from "./agents.js";

const t = useTestDaemon();

const admin = () => t.tokens.admin;
const slow = { options: { delay_ms: 40 } };

describe("checkpoints, forks, restore, close, delete", () => {
  it("checkpoints, forks from it, and restores it into a directory", async () => {
    const client = t.client();
    const id = await newSession(t);
    await collect(client, id, settled((await client.prompt(id, "remember me")).turn));
    const checkpoint = await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: admin() });
    expect(checkpoint.status).toBe(201);
    expect(checkpoint.body.files).toEqual([
      { path: "echo.jsonl", size: expect.any(Number), append_only: true },
    ]);
    const fork = await raw(t.url, "POST", `/v1/sessions/${id}/fork`, { token: admin(), body: {} });
    expect(fork.status).toBe(201);
    expect(fork.body.forked_from).toEqual({ session: id, checkpoint: checkpoint.body.id });
    const forkId = fork.body.id as string;
    const reply = await collect(client, forkId, settled((await client.prompt(forkId, "again")).turn));
    expect(textOf(reply)).toBe("echo #2: again");
    const badCheckpoint = await raw(t.url, "POST", `/v1/sessions/${id}/fork`, {
      token: admin(),
      body: { checkpoint: "99" },
    });
    expect(badCheckpoint.status).toBe(400);
    expect(badCheckpoint.body.error).toMatchObject({ field: "checkpoint" });
    const into = join(mkdtempSync(join(tmpdir(), "brain-restore-")), "native");
    try {
      const restore = await raw(t.url, "POST", `/v1/sessions/${id}/restore`, {
        token: admin(),
        body: { into },
      });
      expect(restore.status, JSON.stringify(restore.body)).toBe(200);
      expect(readdirSync(into)).toEqual(["echo.jsonl"]);
    } finally {
      rmSync(join(into, ".."), { recursive: true, force: true });
    }
    const relative = await raw(t.url, "POST", `/v1/sessions/${id}/restore`, {
      token: admin(),
      body: { into: "rel/dir" },
    });
    expect(relative.status).toBe(400);
    expect(relative.body.error).toMatchObject({
      field: "into",
      message: 'field "into": must be an absolute path',
    });
  });

  it("refuses a checkpoint while a turn runs (409), and restore to another tenant (403)", async () => {
    const client = t.client();
    const id = await newSession(t, { harness: "echo", config: slow });
    const { turn } = await client.prompt(id, "one two three four five six");
    const busy = await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: admin() });
    expect(busy.status).toBe(409);
    await collect(client, id, settled(turn));
    const theirs = await newSession(t, { harness: "echo" }, t.tokens.other);
    const restore = await raw(t.url, "POST", `/v1/sessions/${theirs}/restore`, {
      token: t.tokens.other,
      body: { into: join(tmpdir(), "brain-never-written") },
    });
    expect(restore.status).toBe(403);
  });

  it("closes (twice is fine), reopens on the next prompt, and deletes", async () => {
    const client = t.client();
    const id = await newSession(t);
    await collect(client, id, settled((await client.prompt(id, "one")).turn));
    expect((await client.close(id)).status).toBe("closed");
    expect((await client.close(id)).status).toBe("closed");
    const closed = await collect(client, id, (e) => e.type === "session.closed");
    expect(closed.at(-1)?.type).toBe("session.closed");
    const { turn } = await client.prompt(id, "two");
    const events = await collect(client, id, settled(turn));
    expect(textOf(events.filter((e) => e.turn === turn))).toBe("echo #2: two");
    expect((await client.session(id)).status).toBe("open");
    const del = await raw(t.url, "DELETE", `/v1/sessions/${id}`, { token: admin() });
    expect(del.status).toBe(204);
    expect((await raw(t.url, "GET", `/v1/sessions/${id}`, { token: admin() })).status).toBe(404);
  });

  it("serves a page of the log as JSON, and refuses a bad ?after=", async () => {
    const client = t.client();
    const id = await newSession(t);
    await collect(client, id, settled((await client.prompt(id, "hi")).turn));
    const page = await client.log(id, 2, 3);
    expect(page.events.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(page.last_seq).toBeGreaterThan(5);
    const bad = await raw(t.url, "GET", `/v1/sessions/${id}/log?after=-1`, { token: admin() });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ field: "after" });
    const badEvents = await raw(t.url, "GET", `/v1/sessions/${id}/events?after=x`, { token: admin() });
    expect(badEvents.status).toBe(400);
  });
});

describe("openapi", () => {
  it("describes every route with the zod schemas' JSON Schema", async () => {
    const doc = (await raw(t.url, "GET", "/openapi.json")).body as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/sessions",
        "/v1/sessions/{id}",
        "/v1/sessions/{id}/prompt",
        "/v1/sessions/{id}/events",
        "/v1/sessions/{id}/requests/{requestId}",
        "/api/hitl/requests",
        "/api/hitl/requests/{requestId}/wait",
      ]),
    );
    const create = doc.paths["/v1/sessions"]!.post!.requestBody!.content["application/json"]!.schema as {
      properties: Record<string, unknown>;
      additionalProperties: boolean;
    };
    expect(Object.keys(create.properties)).toEqual(
      expect.arrayContaining(["harness", "agent", "id", "config", "provider", "permissions"]),
    );
    expect(create.additionalProperties).toBe(false);
  });

  it("declares each status a route answers, and the routes served beside /v1", async () => {
    type Operation = { responses: Record<string, unknown>; parameters?: { name: string }[] };
    const doc = (await raw(t.url, "GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, Operation>>;
    };
    // A declared type is checked on a GET too.
    const typed = await fetch(`${t.url}/v1/whoami`, {
      headers: { authorization: `Bearer ${admin()}`, "content-type": "text/plain" },
    });
    expect(typed.status).toBe(415);
    expect(Object.keys(doc.paths["/v1/whoami"]!.get!.responses)).toEqual(
      expect.arrayContaining(["403", "415", "500"]),
    );
    expect(Object.keys(doc.paths["/v1/sessions/{id}/prompt"]!.post!.responses)).toContain("503");
    expect(Object.keys(doc.paths["/v1/sessions/{id}/log"]!.get!.responses)).not.toContain("503");
    // The GETs a tenant's bound refuses (log_reads_per_tenant, event_streams_per_tenant, hitl_waits_per_tenant).
    for (const path of [
      "/v1/sessions/{id}/log",
      "/v1/sessions/{id}/events",
      "/api/hitl/requests/{requestId}/wait",
    ])
      expect(Object.keys(doc.paths[path]!.get!.responses)).toContain("429");
    expect(Object.keys(doc.paths["/v1/sessions/{id}"]!.get!.responses)).not.toContain("429");
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const operation of Object.values(operations)) {
        if (path !== "/healthz" && path !== "/openapi.json")
          expect(operation.responses).toHaveProperty("500");
      }
    }
    expect(doc.paths["/healthz"]?.get).toMatchObject({ security: [] });
    expect(doc.paths["/openapi.json"]?.get).toMatchObject({ security: [] });
  });
});

describe("agent definitions", () => {
  it("lists the agents in $BRAIN_HOME/agents and creates a session from one by id", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-agents-"));
    mkdirSync(join(home, "agents"));
    writeFileSync(
      join(home, "agents", "helper.yaml"),
      'adl: "1.0"\nid: helper\nname: Helper\ndescription: An echo helper\nharness:\n  type: echo\nsystemPrompt: Be brief.\n',
    );
    const d = await startTestDaemon({ home, agents: homeAgents(home) });
    try {
      const list = await raw(d.url, "GET", "/v1/agents", { token: d.tokens.admin });
      expect(list.body).toEqual({
        agents: [{ id: "helper", name: "Helper", description: "An echo helper" }],
      });
      const created = await raw(d.url, "POST", "/v1/sessions", {
        token: d.tokens.admin,
        body: { agent: "helper" },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ harness: "echo", config: { system_prompt: "Be brief." } });
      const path = await raw(d.url, "POST", "/v1/sessions", {
        token: d.tokens.admin,
        body: { agent: "../agents/helper.yaml" },
      });
      expect(path.status).toBe(400); // only catalog ids, never a path the client chooses
      expect(path.body.error).toMatchObject({
        field: "agent",
        message: expect.stringContaining("known agents: helper"),
      });
    } finally {
      await d.cleanup();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("shows an agent's secret-named env in a session view as the log does: redacted", async () => {
    const secret = "ghp_OPERATOR_SECRET_TOKEN_0123456789";
    const home = mkdtempSync(join(tmpdir(), "brain-agents-"));
    mkdirSync(join(home, "agents"));
    writeFileSync(
      join(home, "agents", "helper.json"),
      JSON.stringify({
        adl: "1.0",
        id: "helper",
        name: "Helper",
        harness: { type: "echo", env: { GITHUB_TOKEN: secret, PLAIN_SETTING: "kept-as-is" } },
      }),
    );
    const d = await startTestDaemon({ home, agents: homeAgents(home) });
    try {
      const created = await raw(d.url, "POST", "/v1/sessions", {
        token: d.tokens.other,
        body: { agent: "helper" },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      const client = d.client({ token: d.tokens.other });
      await collect(client, id, settled((await client.prompt(id, "hi")).turn));
      const view = await raw(d.url, "GET", `/v1/sessions/${id}`, { token: d.tokens.other });
      const list = await raw(d.url, "GET", "/v1/sessions", { token: d.tokens.other });
      for (const shown of [created.body, view.body, list.body]) {
        expect(JSON.stringify(shown)).not.toContain(secret);
      }
      const env = { GITHUB_TOKEN: "[redacted:GITHUB_TOKEN]", PLAIN_SETTING: "kept-as-is" };
      expect(view.body.config).toMatchObject({ options: { env } });
      // The record keeps the value (the harness needs it); only what clients are shown is redacted.
      expect((await d.brain.record(id)).config.options?.env).toMatchObject({ GITHUB_TOKEN: secret });
      const opened = (await d.brain.events(id)).find((e) => e.type === "session.opened");
      expect(JSON.stringify(opened)).not.toContain(secret);
    } finally {
      await d.cleanup();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
