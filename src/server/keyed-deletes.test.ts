// Idempotency-Key on DELETE /v1/sessions/{id}: a client whose connection dropped after a delete retries under the
// same key and gets the first answer (204), not a 404 it cannot tell from "never existed"; across a daemon
// restart too (the store keeps a tombstone of the delete). Another tenant's retry is a 404 telling it nothing.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { kept, keyDigest, TOMBSTONE_WINDOW_MS, TOMBSTONES_PER_TENANT } from "../core/deleted-sessions.js";
import { DEFAULT_TENANT } from "../protocol/session.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const del = (d: TestDaemon, id: string, key: string | undefined, token = d.tokens.admin) =>
  raw(d.url, "DELETE", `/v1/sessions/${id}`, {
    token,
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
  });

const make = async (d: TestDaemon, body: unknown = { harness: "echo" }, token = d.tokens.admin) => {
  const res = await raw(d.url, "POST", "/v1/sessions", { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
};

const homes: string[] = [];
afterAll(() => Promise.all(homes.map((home) => fs.rm(home, { recursive: true, force: true }))));

describe("Idempotency-Key on deletes", () => {
  it("answers a delete retried under its key with 204 again, and one under another key or none with 404", async () => {
    const id = await make(t);
    expect((await del(t, id, "d-1")).status).toBe(204);
    const retried = await del(t, id, "d-1");
    expect(retried.status, JSON.stringify(retried.body)).toBe(204);
    expect((await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.admin })).status).toBe(404);
    expect((await del(t, id, "d-2")).status).toBe(404);
    expect((await del(t, id, undefined)).status).toBe(404);
  });

  it("answers two identical keyed deletes sent at once both with 204, and deletes the session once", async () => {
    // Several rounds: the second request has to reach the daemon before the first's tombstone is written.
    for (let round = 0; round < 5; round++) {
      const id = await make(t);
      const key = `twin-${round}`;
      const answers = await Promise.all([del(t, id, key), del(t, id, key), del(t, id, key)]);
      expect(
        answers.map((res) => res.status),
        JSON.stringify(answers.map((res) => res.body)),
      ).toEqual([204, 204, 204]);
      expect((await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.admin })).status).toBe(404);
    }
  });

  it("answers the retry of each of two deletes made at once under different keys with 204", async () => {
    const id = await make(t);
    const made = (await t.brain.record(id)).created_at;
    expect((await del(t, id, "mine")).status).toBe(204);
    // The tombstone the other client's delete wrote as it found the session too, before either removed it (both
    // got 204): what two deletes at once leave, written here in that order rather than raced.
    const deleted_at = new Date().toISOString();
    await t.brain.deletes!.add(DEFAULT_TENANT, { id, key: keyDigest("yours"), deleted_at, made });
    const retried = await Promise.all(["mine", "yours"].map((key) => del(t, id, key)));
    expect(
      retried.map((res) => res.status),
      JSON.stringify(retried.map((res) => res.body)),
    ).toEqual([204, 204]);
  });

  it("gives another tenant's retry under the key the 404 a session that never existed gets", async () => {
    const id = await make(t);
    expect((await del(t, id, "shared")).status).toBe(204);
    const theirs = await del(t, id, "shared", t.tokens.other);
    const never = await del(t, "never-was", "shared", t.tokens.other);
    expect(theirs.status).toBe(404);
    const said = (res: typeof theirs) => (res.body.error as { message: string }).message;
    expect(said(theirs)).toBe(said(never).replace("never-was", id));
    // Nor does their key reach the first tenant's own session.
    const acme = await make(t, { harness: "echo" }, t.tokens.other);
    expect((await del(t, acme, "shared")).status).toBe(404);
    expect((await raw(t.url, "GET", `/v1/sessions/${acme}`, { token: t.tokens.other })).status).toBe(200);
  });

  it("does not delete a session made again under the id after the delete its retry repeats", async () => {
    const id = `again-${Date.now()}`;
    await make(t, { harness: "echo", id });
    expect((await del(t, id, "d-again")).status).toBe(204);
    await make(t, { harness: "echo", id });
    expect((await del(t, id, "d-again")).status).toBe(204);
    expect((await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.admin })).status).toBe(200);
  });

  it("does not delete a session made again under the id when the delete's tombstone is dated by a clock ahead", async () => {
    const id = `skewed-${Date.now()}`;
    await make(t, { harness: "echo", id });
    expect((await del(t, id, "d-skew")).status).toBe(204);
    // The tombstone as a node whose clock runs a minute ahead of this one's would have written it: the session
    // made again here a moment later is dated before the delete.
    const deletes = t.brain.deletes!;
    const stone = (await deletes.list(DEFAULT_TENANT)).find((s) => s.id === id)!;
    await deletes.add(DEFAULT_TENANT, { ...stone, deleted_at: new Date(Date.now() + 60_000).toISOString() });
    await make(t, { harness: "echo", id });
    expect((await del(t, id, "d-skew")).status).toBe(204);
    expect((await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.admin })).status).toBe(200);
  });

  it("answers a delete retried after a daemon restart with 204", async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-keyed-deletes-"));
    homes.push(home);
    const first = await startTestDaemon({ home });
    let id: string;
    try {
      id = await make(first);
      expect((await del(first, id, "r-1")).status).toBe(204);
    } finally {
      await first.cleanup();
    }
    const second = await startTestDaemon({ home, tokens: first.tokens });
    try {
      expect((await del(second, id, "r-1")).status).toBe(204);
      expect((await del(second, id, "r-1", second.tokens.other)).status).toBe(404);
    } finally {
      await second.cleanup();
    }
  });

  it("keeps a tenant's tombstones for the window and the newest of them only", () => {
    const now = Date.parse("2026-01-02T00:00:00Z");
    const at = (ms: number) => new Date(now - ms).toISOString();
    const old = { id: "old", key: "k", deleted_at: at(TOMBSTONE_WINDOW_MS) };
    const recent = { id: "recent", key: "k", deleted_at: at(1000) };
    expect(kept([old, recent, { id: 7 }], now)).toEqual([recent]);
    expect(kept("not a list", now)).toEqual([]);
    const many = Array.from({ length: TOMBSTONES_PER_TENANT + 5 }, (_, i) => ({ ...recent, id: `s${i}` }));
    const added = { id: "s0", key: "k2", deleted_at: at(0) };
    const list = kept(many, now, added);
    expect(list).toHaveLength(TOMBSTONES_PER_TENANT);
    expect(list.at(-1)).toEqual(added);
    // The session's tombstone under another key stays (cut as the oldest here); one under the same key is replaced.
    expect(list.filter((t) => t.id === "s0")).toEqual([added]);
    const again = { ...added, deleted_at: at(1) };
    expect(kept([recent, added], now, again)).toEqual([recent, again]);
    const other = { ...added, key: "k3" };
    expect(kept([recent, added], now, other)).toEqual([recent, added, other]);
  });
});
