// Idempotency-Key on the requests that make a session (create, fork, handoff): a client whose connection dropped
// after sending one retries under the same key and gets the session the first made, never a second one; across
// a daemon restart too (the key is in the made session's record). Keys are the tenant's own.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";
import { homeAgents } from "./agents.js";

const t = useTestDaemon();

const post = (d: TestDaemon, route: string, key: string | undefined, body: unknown, token = d.tokens.admin) =>
  raw(d.url, "POST", route, { token, body, ...(key ? { headers: { "Idempotency-Key": key } } : {}) });

/** The ids of the caller's sessions. */
async function listed(d: TestDaemon, token = d.tokens.admin): Promise<string[]> {
  const res = await raw(d.url, "GET", "/v1/sessions", { token });
  return (res.body.sessions as { id: string }[]).map((s) => s.id);
}

const homes: string[] = [];
afterAll(() => Promise.all(homes.map((home) => fs.rm(home, { recursive: true, force: true }))));

describe("Idempotency-Key on creates, forks and handoffs", () => {
  it("makes one session for a create retried, after it and at once, and refuses the key with another body", async () => {
    const before = await listed(t);
    const body = { harness: "echo", config: { model: "m-1" } };
    const first = await post(t, "/v1/sessions", "c-1", body);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const [again, meanwhile] = await Promise.all([
      post(t, "/v1/sessions", "c-1", { config: { model: "m-1" }, harness: "echo" }),
      post(t, "/v1/sessions", "c-1", body),
    ]);
    expect([again.status, meanwhile.status]).toEqual([201, 201]);
    expect([again.body.id, meanwhile.body.id]).toEqual([first.body.id, first.body.id]);
    const made = (await listed(t)).filter((id) => !before.includes(id));
    expect(made).toEqual([first.body.id]);

    const other = await post(t, "/v1/sessions", "c-1", { harness: "echo", config: { model: "m-2" } });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
    expect((other.body.error as { message: string }).message).toContain(
      'Idempotency-Key "c-1" was already used: its first request, an earlier create, had another body',
    );
    expect((await listed(t)).filter((id) => !before.includes(id))).toEqual([first.body.id]);
    // A new key is a new session; no key, as before, a new one each time.
    const next = await post(t, "/v1/sessions", "c-2", body);
    expect(next.body.id).not.toBe(first.body.id);
  });

  it("gives a second tenant reusing a key its own session, and never the first tenant's", async () => {
    const body = { harness: "echo" };
    const mine = await post(t, "/v1/sessions", "shared-key", body);
    const theirs = await post(t, "/v1/sessions", "shared-key", body, t.tokens.other);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.tenant).toBe("acme");
    // Their retry gets theirs, with another body a 422 about their key: nothing of the first tenant's.
    const retried = await post(t, "/v1/sessions", "shared-key", body, t.tokens.other);
    expect(retried.body.id).toBe(theirs.body.id);
    expect(await listed(t, t.tokens.other)).toContain(theirs.body.id);
    expect(await listed(t, t.tokens.other)).not.toContain(mine.body.id);
  });

  it("keeps a default-tenant create's chosen id, and refuses the id taken by a session the key did not make", async () => {
    const chosen = `idem-chosen-${process.pid}`;
    const first = await post(t, "/v1/sessions", "c-id", { harness: "echo", id: chosen });
    expect(first.body.id).toBe(chosen);
    expect((await post(t, "/v1/sessions", "c-id", { harness: "echo", id: chosen })).status).toBe(201);
    const taken = await post(t, "/v1/sessions", "c-id-2", { harness: "echo", id: chosen });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: "conflict", field: "id" });
  });

  it("runs a fork once and a handoff once when each is retried", async () => {
    const client = t.client();
    const id = (await post(t, "/v1/sessions", undefined, { harness: "echo" })).body.id as string;
    await collect(client, id, settled((await client.prompt(id, "remember me")).turn));
    const checkpoint = await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: t.tokens.admin });
    expect(checkpoint.status).toBe(201);
    const before = await listed(t);
    const fork = await post(t, `/v1/sessions/${id}/fork`, "f-1", {});
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    const forkAgain = await post(t, `/v1/sessions/${id}/fork`, "f-1", {});
    expect(forkAgain.body.id).toBe(fork.body.id);
    const forkOther = await post(t, `/v1/sessions/${id}/fork`, "f-1", { checkpoint: "latest" });
    expect(forkOther.status).toBe(422);
    expect(forkOther.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });

    const handoff = await post(t, `/v1/sessions/${id}/handoff`, "h-1", { to: "echo" });
    expect(handoff.status, JSON.stringify(handoff.body)).toBe(201);
    const handoffAgain = await post(t, `/v1/sessions/${id}/handoff`, "h-1", { to: "echo" });
    expect(handoffAgain.body.id).toBe(handoff.body.id);
    const made = (await listed(t)).filter((s) => !before.includes(s));
    expect(made.sort()).toEqual([fork.body.id, handoff.body.id].sort());
  });

  it("answers a fork and a handoff retried after their source was deleted with the sessions they made", async () => {
    const client = t.client();
    const id = (await post(t, "/v1/sessions", undefined, { harness: "echo" })).body.id as string;
    await collect(client, id, settled((await client.prompt(id, "keep me")).turn));
    expect(
      (await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: t.tokens.admin })).status,
    ).toBe(201);
    const fork = await post(t, `/v1/sessions/${id}/fork`, "gone-f", {});
    const handoff = await post(t, `/v1/sessions/${id}/handoff`, "gone-h", { to: "echo" });
    expect([fork.status, handoff.status]).toEqual([201, 201]);
    // Forced: the fork and handoff it made read their history from it (a plain delete is a 409 naming them).
    const deleted = await raw(t.url, "DELETE", `/v1/sessions/${id}?force=true`, { token: t.tokens.admin });
    expect(deleted.status).toBe(204);

    // The client whose answers were lost retries: it learns the sessions it made, and no new one is made.
    const before = await listed(t);
    const forkAgain = await post(t, `/v1/sessions/${id}/fork`, "gone-f", {});
    expect(forkAgain.status, JSON.stringify(forkAgain.body)).toBe(201);
    expect(forkAgain.body.id).toBe(fork.body.id);
    const handoffAgain = await post(t, `/v1/sessions/${id}/handoff`, "gone-h", { to: "echo" });
    expect(handoffAgain.status, JSON.stringify(handoffAgain.body)).toBe(201);
    expect(handoffAgain.body.id).toBe(handoff.body.id);
    expect(await listed(t)).toEqual(before);
    // A new key, or another tenant sending the same one, still finds no source: 404, nothing made.
    expect((await post(t, `/v1/sessions/${id}/fork`, "gone-f2", {})).status).toBe(404);
    const theirs = await post(t, `/v1/sessions/${id}/fork`, "gone-f", {}, t.tokens.other);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toContain(fork.body.id as string);
    expect(await listed(t)).toEqual(before);
  });

  it("checks a close's key and answers its retry with the session, closed", async () => {
    const id = (await post(t, "/v1/sessions", undefined, { harness: "echo" })).body.id as string;
    const closed = await post(t, `/v1/sessions/${id}/close`, "x-1", undefined);
    const again = await post(t, `/v1/sessions/${id}/close`, "x-1", undefined);
    expect([closed.status, again.status]).toEqual([200, 200]);
    expect(again.body).toMatchObject({ id, status: "closed" });
    const bad = await raw(t.url, "POST", `/v1/sessions/${id}/close`, {
      token: t.tokens.admin,
      headers: { "Idempotency-Key": "" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ field: "Idempotency-Key" });
  });

  it("answers a create retried after its agent's definition was removed with the session the first made", async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-keyed-agent-"));
    homes.push(home);
    await fs.mkdir(path.join(home, "agents"));
    const definition = path.join(home, "agents", "helper.yaml");
    await fs.writeFile(definition, 'adl: "1.0"\nid: helper\nname: Helper\nharness:\n  type: echo\n');
    const d = await startTestDaemon({ home, agents: homeAgents(home) });
    try {
      const first = await post(d, "/v1/sessions", "a-1", { agent: "helper" });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      await fs.rm(definition);
      const retried = await post(d, "/v1/sessions", "a-1", { agent: "helper" });
      expect(retried.status, JSON.stringify(retried.body)).toBe(201);
      expect(retried.body.id).toBe(first.body.id);
      // A new key asks for the agent again: it is gone.
      expect((await post(d, "/v1/sessions", "a-2", { agent: "helper" })).status).toBe(400);
      expect(await listed(d)).toEqual([first.body.id]);
    } finally {
      await d.cleanup();
    }
  });

  it("answers a create retried after a daemon restart with the session the first made", async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-keyed-creates-"));
    homes.push(home);
    const first = await startTestDaemon({ home });
    let made: string;
    try {
      made = (await post(first, "/v1/sessions", "r-1", { harness: "echo" })).body.id as string;
    } finally {
      await first.cleanup();
    }
    const second = await startTestDaemon({ home, tokens: first.tokens });
    try {
      const retried = await post(second, "/v1/sessions", "r-1", { harness: "echo" });
      expect(retried.status).toBe(201);
      expect(retried.body.id).toBe(made);
      expect(await listed(second)).toEqual([made]);
    } finally {
      await second.cleanup();
    }
  });
});
