// brain.config.json `limits.stored_sessions_per_tenant`: a tenant may keep so many sessions, open or closed; a
// create or handoff past it is refused (429, naming the bound and what to do), another tenant is not, and deleting
// one makes room. The count follows this daemon's creates and deletes, and is taken again from the store near the
// bound, so sessions another process made or removed count too.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { startTestDaemon } from "../testing/daemon.js";
import { raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon({ storedSessionsPerTenant: 3 });

const create = (token: string) => raw(t.url, "POST", "/v1/sessions", { token, body: { harness: "echo" } });
const post = (token: string, path: string, body: unknown = {}) => raw(t.url, "POST", path, { token, body });

describe("stored sessions per tenant", () => {
  it("refuses a tenant's session past its bound, by name, until the tenant deletes one", async () => {
    const a = t.tokens.admin;
    const made = [await create(a), await create(a), await create(a)];
    expect(made.map((r) => r.status)).toEqual([201, 201, 201]);
    const id = made[0]!.body.id as string;
    // Closed sessions are stored sessions too.
    for (const r of made) expect((await post(a, `/v1/sessions/${r.body.id}/close`)).status).toBe(200);
    const refused = await create(a);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: "limit_reached",
      message: expect.stringMatching(
        /tenant "default" has 3 sessions stored on this host.*DELETE \/v1\/sessions\/\{id\}.*limits\.stored_sessions_per_tenant/,
      ),
    });
    expect((await post(a, `/v1/sessions/${id}/handoff`, { to: "echo" })).status).toBe(429);

    expect((await create(t.tokens.other)).status).toBe(201);

    expect((await raw(t.url, "DELETE", `/v1/sessions/${id}`, { token: a })).status).toBe(204);
    expect((await create(a)).status).toBe(201);
    expect((await create(a)).status).toBe(429);
  });

  it("counts again near the bound: a session another process removed makes room", async () => {
    const a = t.tokens.admin;
    expect((await create(a)).status).toBe(429);
    const mine = (await t.client().sessions()).filter((s) => s.tenant === undefined);
    await new FsSessionStore(t.home).remove(mine[0]!.id);
    expect((await create(a)).status).toBe(201);
  });

  it("lets a burst of creates past the bound only as far as it goes", async () => {
    // The other tenant keeps one session from the first test: two more fit.
    const burst = await Promise.all(Array.from({ length: 5 }, () => create(t.tokens.other)));
    expect(burst.map((r) => r.status).sort()).toEqual([201, 201, 429, 429, 429]);
  });
});

describe("stored sessions per tenant, with a record that cannot be read", () => {
  it("counts a damaged record for the tenant it names, and fails no other tenant's create", async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-limit-"));
    const store = new FsSessionStore(home);
    const unparsed = (await store.create({ harness: "echo", config: {} })).id;
    await store.create({ harness: "echo", config: {}, tenant: "acme" });
    const named = await store.create({ harness: "echo", config: {}, tenant: "acme" });
    const file = (id: string) => path.join(home, "sessions", id, "session.json");
    await fs.writeFile(file(unparsed), "{not json");
    // Parses, but is no record: it still says whose it is.
    await fs.writeFile(file(named.id), JSON.stringify({ ...named, harness: 7 }));
    const d = await startTestDaemon({ home, storedSessionsPerTenant: 2 });
    try {
      const create = (token: string) =>
        raw(d.url, "POST", "/v1/sessions", { token, body: { harness: "echo" } });
      const refused = await create(d.tokens.other);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ message: expect.stringContaining('tenant "acme" has 2') });
      // One nobody can tell the tenant of is counted for none.
      expect((await create(d.tokens.admin)).status).toBe(201);
      expect((await create(d.tokens.admin)).status).toBe(201);
      expect((await create(d.tokens.admin)).status).toBe(429);
    } finally {
      await d.cleanup();
      await fs.rm(home, { recursive: true, force: true });
    }
  });
});
