// Idempotency-Key on POST /v1/sessions/{id}/rebuild: a client whose answer was lost retries under its key. A
// rebuild retried ran again (a second folder of old files set aside, the harness closed and reopened for nothing).
// Its keyed answers are in this node's memory (./keyed-answers.ts).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

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
    // The client sends its key, and its retry is answered the same.
    const viaClient = await t.client().rebuild(id, { key: "rebuild-2" });
    expect(await t.client().rebuild(id, { key: "rebuild-2" })).toEqual(viaClient);
    expect(await recovered(id)).toBe(2);
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
