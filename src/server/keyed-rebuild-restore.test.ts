// Idempotency-Key on POST /v1/sessions/{id}/rebuild and .../restore: a client whose answer was lost retries under
// its key. A rebuild retried ran again (a second folder of old files set aside, the harness closed and reopened for
// nothing); a restore retried found the directory it had filled and was refused (400), which the client could not
// tell from a real failure. A rebuild's key is in the session.recovered it appends, so a retry after a restart (or on
// another node) is answered from the log; a restore's is in the session's record (src/core/restores.ts).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RESTORES_KEPT } from "../core/restores.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const outside = mkdtempSync(join(tmpdir(), "brain-keyed-restore-"));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

const keyed = (key: string, token = t.tokens.admin, body?: unknown) => ({
  token,
  headers: { "Idempotency-Key": key },
  ...(body === undefined ? {} : { body }),
});
const asides = (id: string) =>
  readdirSync(join(t.home, "sessions", id)).filter((name) => name.startsWith("native-before-rebuild-"));
const recovered = async (id: string) =>
  (await t.client().log(id)).events.filter((e) => e.type === "session.recovered").length;

/** An echo session with one turn answered. */
async function answered(): Promise<string> {
  const client = t.client();
  const { id } = await client.create({ harness: "echo" });
  await collect(client, id, settled((await client.prompt(id, "remember KIWI")).turn));
  return id;
}

describe("Idempotency-Key on rebuild", () => {
  it("rebuilds once under one key: a retry gets the first answer, no second aside folder, no second restart", async () => {
    const id = await answered();
    const path = `/v1/sessions/${id}/rebuild`;
    const first = await raw(t.url, "POST", path, keyed("rebuild-1"));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await raw(t.url, "POST", path, keyed("rebuild-1"));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(asides(id)).toEqual([first.body.aside]);
    expect(await recovered(id)).toBe(1);
    // The log is the tenant's to read: it names the aside folder, not where the daemon keeps it.
    const logged = (await t.client().log(id)).events.find((e) => e.type === "session.recovered");
    expect(JSON.stringify(logged)).not.toContain(t.home);
    // The client sends its key, and its retry is answered the same.
    const viaClient = await t.client().rebuild(id, { key: "rebuild-2" });
    expect(await t.client().rebuild(id, { key: "rebuild-2" })).toEqual(viaClient);
    expect(await recovered(id)).toBe(2);
  });

  it("answers a rebuild retried after a daemon restart from its logged session.recovered, rebuilding nothing again", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-keyed-rebuild-"));
    const first = await startTestDaemon({ home });
    let id: string;
    let answer: unknown;
    try {
      const client = first.client();
      ({ id } = await client.create({ harness: "echo" }));
      await collect(client, id, settled((await client.prompt(id, "remember KIWI")).turn));
      const res = await raw(first.url, "POST", `/v1/sessions/${id}/rebuild`, {
        token: first.tokens.admin,
        headers: { "Idempotency-Key": "rebuild-restart" },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      answer = res.body;
    } finally {
      await first.cleanup();
    }
    const second = await startTestDaemon({ home, tokens: first.tokens });
    try {
      const again = await raw(second.url, "POST", `/v1/sessions/${id}/rebuild`, {
        token: second.tokens.admin,
        headers: { "Idempotency-Key": "rebuild-restart" },
      });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body).toEqual(answer);
      const names = readdirSync(join(home, "sessions", id));
      expect(names.filter((name) => name.startsWith("native-before-rebuild-"))).toHaveLength(1);
      const events = (await second.client().log(id)).events.filter((e) => e.type === "session.recovered");
      expect(events.map((e) => e.data)).toMatchObject([{ idempotency_key: "rebuild-restart" }]);
      // The key names the rebuild now: sent with a prompt, it is another command's.
      const prompt = await raw(second.url, "POST", `/v1/sessions/${id}/prompt`, {
        token: second.tokens.admin,
        headers: { "Idempotency-Key": "rebuild-restart" },
        body: { text: "again" },
      });
      expect(prompt.status, JSON.stringify(prompt.body)).toBe(422);
      expect(prompt.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
    } finally {
      await second.cleanup();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("keeps a tenant's key its own, and refuses a malformed key", async () => {
    const id = await answered();
    const path = `/v1/sessions/${id}/rebuild`;
    expect((await raw(t.url, "POST", path, keyed("shared"))).status).toBe(200);
    const theirs = await raw(t.url, "POST", path, keyed("shared", t.tokens.other));
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toContain("native-before-rebuild-");
    expect((await raw(t.url, "POST", path, keyed(""))).status).toBe(400);
    expect(asides(id)).toHaveLength(1);
  });
});

describe("Idempotency-Key on restore", () => {
  it("answers a retried restore with the first answer, not a refusal of the directory it filled", async () => {
    const id = await answered();
    const checkpoint = await t.client().checkpoint(id);
    const into = join(outside, "once");
    const path = `/v1/sessions/${id}/restore`;
    const first = await raw(t.url, "POST", path, keyed("restore-1", t.tokens.admin, { into }));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ ok: true, checkpoint: checkpoint.id });
    const again = await raw(t.url, "POST", path, keyed("restore-1", t.tokens.admin, { into }));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(readdirSync(into)).toEqual(["echo.jsonl"]);
    // Without the key (or with a new one) it is a new restore, refused: the directory is not empty.
    const anew = await raw(t.url, "POST", path, keyed("restore-2", t.tokens.admin, { into }));
    expect(anew.status).toBe(400);
    expect(JSON.stringify(anew.body)).toContain("is not empty");
    // The key with another body is another request.
    const other = await raw(t.url, "POST", path, {
      ...keyed("restore-1", t.tokens.admin, { into: join(outside, "elsewhere") }),
    });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
    expect(readdirSync(outside)).not.toContain("elsewhere");
  });

  it("answers a restore retried after a daemon restart from the session's record, not as a new restore", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-keyed-restore-home-"));
    const into = join(outside, "restart");
    const first = await startTestDaemon({ home });
    const send = (url: string, token: string, key: string, body: unknown) =>
      raw(url, "POST", `/v1/sessions/${id}/restore`, { token, headers: { "Idempotency-Key": key }, body });
    let id = "";
    let answer: unknown;
    try {
      const client = first.client();
      ({ id } = await client.create({ harness: "echo" }));
      await collect(client, id, settled((await client.prompt(id, "remember KIWI")).turn));
      await client.checkpoint(id);
      const res = await send(first.url, first.tokens.admin, "restore-restart", { into });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      answer = res.body;
    } finally {
      await first.cleanup();
    }
    const second = await startTestDaemon({ home, tokens: first.tokens });
    try {
      const again = await send(second.url, second.tokens.admin, "restore-restart", { into });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body).toEqual(answer);
      expect(readdirSync(into)).toEqual(["echo.jsonl"]);
      // The record still tells another body from the first: another request under the key, refused.
      const other = await send(second.url, second.tokens.admin, "restore-restart", {
        into: join(outside, "r2"),
      });
      expect(other.status, JSON.stringify(other.body)).toBe(422);
      expect(other.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
      expect(readdirSync(outside)).not.toContain("r2");
    } finally {
      await second.cleanup();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("keeps the newest keyed restores in the record, a bounded number", async () => {
    const id = await answered();
    await t.client().checkpoint(id);
    const path = `/v1/sessions/${id}/restore`;
    for (let i = 0; i <= RESTORES_KEPT; i++) {
      const res = await raw(
        t.url,
        "POST",
        path,
        keyed(`bound-${i}`, t.tokens.admin, { into: join(outside, `b${i}`) }),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const kept = (await t.client().session(id)).restores?.map((r) => r.key);
    expect(kept).toHaveLength(RESTORES_KEPT);
    expect(kept?.[0]).toBe("bound-1");
    expect(kept?.at(-1)).toBe(`bound-${RESTORES_KEPT}`);
  });

  it("keeps every one of keyed restores made at once: none overwrites another's answer in the record", async () => {
    const id = await answered();
    await t.client().checkpoint(id);
    const keys = Array.from({ length: 12 }, (_, i) => `together-${i}`);
    const sent = await Promise.all(
      keys.map((key) =>
        raw(
          t.url,
          "POST",
          `/v1/sessions/${id}/restore`,
          keyed(key, t.tokens.admin, { into: join(outside, key) }),
        ),
      ),
    );
    for (const res of sent) expect(res.status, JSON.stringify(res.body)).toBe(200);
    const kept = (await t.client().session(id)).restores?.map((r) => r.key);
    expect([...(kept ?? [])].sort()).toEqual([...keys].sort());
  });

  it("retries through the client under its key; another tenant's same key does not see the answer", async () => {
    const id = await answered();
    await t.client().checkpoint(id);
    const into = join(outside, "client");
    const first = await t.client().restore(id, into, undefined, { key: "restore-3" });
    expect(await t.client().restore(id, into, undefined, { key: "restore-3" })).toEqual(first);
    const theirs = await raw(t.url, "POST", `/v1/sessions/${id}/restore`, {
      ...keyed("restore-3", t.tokens.other, { into }),
    });
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toContain(first.checkpoint);
  });
});
