// brain.config.json `limits.log_bytes_per_tenant`: all of one tenant's sessions together (their logs and
// checkpoints) take its prompts until they hold the bound; past it each of its sessions, new ones too, is a 429
// naming the tenant's bound and what to do, while another tenant's requests go on. Deleting sessions makes room,
// and a restarted daemon counts the same bytes from the store.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled } from "../testing/http.js";

const BOUND = 96 << 10;
const PROMPT = "x".repeat(16 << 10);
const homes: string[] = [];
afterAll(() => Promise.all(homes.map((home) => fs.rm(home, { recursive: true, force: true }))));

async function daemonOn(home?: string, before?: TestDaemon): Promise<TestDaemon> {
  const dir = home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "brain-tenant-bytes-")));
  if (!home) homes.push(dir);
  return startTestDaemon({
    home: dir,
    logBytesPerTenant: BOUND,
    ...(before ? { tokens: before.tokens } : {}),
  });
}

/** What session `id` takes in `home`'s store: its record and its log's files. */
async function stored(home: string, id: string): Promise<number> {
  const dir = path.join(home, "sessions", id);
  const files = (await fs.readdir(dir)).filter((f) => f === "session.json" || f.startsWith("events"));
  const sizes = await Promise.all(files.map(async (f) => (await fs.stat(path.join(dir, f))).size));
  return sizes.reduce((a, b) => a + b, 0);
}

const checkpoint = (d: TestDaemon, id: string) =>
  raw(d.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: d.tokens.admin });
const prompt = (d: TestDaemon, id: string, text: string, token: string) =>
  raw(d.url, "POST", `/v1/sessions/${id}/prompt`, { token, body: { text } });

describe("log bytes per tenant", () => {
  it("makes no burst of new sessions past the bound, counting each one's record (its config again)", async () => {
    const d = await daemonOn();
    try {
      // Each new session holds its config twice, in its record and its first event: 16 KiB each, a sixth of it.
      const body = { harness: "echo", config: { system_prompt: "s".repeat(16 << 10) } };
      const burst = await Promise.all(
        Array.from({ length: 12 }, () => raw(d.url, "POST", "/v1/sessions", { token: d.tokens.admin, body })),
      );
      const made = burst.filter((r) => r.status === 201).map((r) => r.body.id as string);
      expect(burst.filter((r) => r.status !== 201).map((r) => r.status)).toEqual(
        Array(12 - made.length).fill(429),
      );
      // Each was made while what the tenant held was under the bound: all but the last it admitted.
      const sizes = await Promise.all(made.map((id) => stored(d.home, id)));
      const held = sizes.reduce((a, b) => a + b, 0);
      expect(held - Math.max(...sizes), `${made.length} sessions, ${sizes.join(" + ")} bytes`).toBeLessThan(
        BOUND,
      );
      const next = await raw(d.url, "POST", "/v1/sessions", { token: d.tokens.admin, body });
      expect(next.status).toBe(429);
      expect(next.body.error).toMatchObject({ message: expect.stringContaining("no more sessions") });
    } finally {
      await d.cleanup();
    }
  });

  it("makes no burst of forks and handoffs past the bound, counting each new session as it is made", async () => {
    const d = await daemonOn();
    try {
      // The source holds its config twice (record and first event), 64 KiB, under the bound; a fork or a handoff
      // holds it twice again, so the bound lets one of them and no more.
      const config = { system_prompt: "s".repeat(32 << 10) };
      const source = await newSession(d, { harness: "echo", config });
      const said = await prompt(d, source, "hi", d.tokens.admin);
      await collect(d.client(), source, settled(said.body.turn as string));
      expect((await checkpoint(d, source)).status).toBe(201);
      const copy = (how: "fork" | "handoff") =>
        raw(d.url, "POST", `/v1/sessions/${source}/${how}`, {
          token: d.tokens.admin,
          body: how === "fork" ? {} : { to: "echo" },
        });
      const hows = Array.from({ length: 8 }, (_, i): "fork" | "handoff" => (i % 2 ? "handoff" : "fork"));
      const burst = await Promise.all(hows.map(copy));
      const made = burst.filter((r) => r.status === 201).map((r) => r.body.id as string);
      expect(burst.map((r) => r.status).sort(), `${made.length} made`).toEqual([201, ...Array(7).fill(429)]);
      burst.forEach((r, i) => {
        const refusal = { code: "limit_reached", message: expect.stringContaining(`no more ${hows[i]}s`) };
        if (r.status === 429) expect(r.body.error).toMatchObject(refusal);
      });
      const sizes = await Promise.all([source, ...made].map((id) => stored(d.home, id)));
      expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(BOUND);
      expect(sizes[0]).toBeLessThan(BOUND);
    } finally {
      await d.cleanup();
    }
  });

  it("refuses a tenant's prompts in every session once they hold the bound, and no other tenant's", async () => {
    const d = await daemonOn();
    let after: TestDaemon | undefined;
    try {
      const mine: string[] = [];
      let refused: Awaited<ReturnType<typeof prompt>> | undefined;
      // Each session takes one prompt (and its echo), far under any session bound: only their sum passes it. Past
      // it, the next session is refused as its prompt would be.
      for (let i = 0; i < 16 && !refused; i++) {
        const made = await raw(d.url, "POST", "/v1/sessions", {
          token: d.tokens.admin,
          body: { harness: "echo" },
        });
        if (made.status !== 201) {
          refused = made;
          break;
        }
        const id = made.body.id as string;
        mine.push(id);
        const res = await prompt(d, id, PROMPT, d.tokens.admin);
        if (res.status !== 202) refused = res;
        else await collect(d.client(), id, settled(res.body.turn as string));
        if (i === 0) expect((await checkpoint(d, id)).status).toBe(201);
      }
      expect(refused?.status).toBe(429);
      expect(refused?.body.error).toMatchObject({
        code: "limit_reached",
        message: expect.stringMatching(
          new RegExp(
            `tenant "default"'s sessions hold \\d+ bytes on this host, its limit \\(${BOUND}\\).*DELETE /v1/sessions/\\{id\\}.*limits\\.log_bytes_per_tenant`,
          ),
        ),
      });
      // Every session of the tenant is refused, one it made first as well.
      expect((await prompt(d, mine[0]!, "hi", d.tokens.admin)).status).toBe(429);
      // Nor does one with no checkpoint take its first: only a session's own bound lets it (to be forked), and a
      // fork is the tenant's too, whose first checkpoint would store its state once more.
      const taken = await checkpoint(d, mine.at(-1)!);
      expect(taken.status).toBe(429);
      expect(taken.body.error).toMatchObject({ message: expect.stringContaining("no more checkpoints") });
      // Nor does a fork or a handoff copy a session's state into a new one of the tenant.
      const fork = await raw(d.url, "POST", `/v1/sessions/${mine[0]}/fork`, {
        token: d.tokens.admin,
        body: {},
      });
      expect(fork.status).toBe(429);
      expect(fork.body.error).toMatchObject({ message: expect.stringContaining("no more forks") });
      const handoff = await raw(d.url, "POST", `/v1/sessions/${mine[0]}/handoff`, {
        token: d.tokens.admin,
        body: { to: "echo" },
      });
      expect(handoff.status).toBe(429);
      expect(handoff.body.error).toMatchObject({ message: expect.stringContaining("no more handoffs") });
      // Nor a new session: its record and first event hold its config, up to 4 MiB each, which no prompt adds.
      const config = { system_prompt: "z".repeat(BOUND) };
      const made = await raw(d.url, "POST", "/v1/sessions", {
        token: d.tokens.admin,
        body: { harness: "echo", config },
      });
      expect(made.status, JSON.stringify(made.body).slice(0, 200)).toBe(429);
      expect(made.body.error).toMatchObject({ message: expect.stringContaining("no more sessions") });
      // Another tenant's sessions go on: a prompt, a checkpoint, another prompt.
      const theirs = await newSession(d, { harness: "echo" }, d.tokens.other);
      const first = await prompt(d, theirs, PROMPT, d.tokens.other);
      expect(first.status).toBe(202);
      await collect(d.client({ token: d.tokens.other }), theirs, settled(first.body.turn as string));
      const cp = await raw(d.url, "POST", `/v1/sessions/${theirs}/checkpoints`, { token: d.tokens.other });
      expect(cp.status).toBe(201);
      expect((await prompt(d, theirs, "and more", d.tokens.other)).status).toBe(202);

      // A restarted daemon counts the tenant's sessions from the store again.
      await d.cleanup();
      after = await daemonOn(d.home, d);
      expect((await prompt(after, mine[0]!, "hi", after.tokens.admin)).status).toBe(429);
      // Deleting sessions it no longer needs makes room.
      for (const id of mine.slice(1)) {
        const deleted = await raw(after.url, "DELETE", `/v1/sessions/${id}`, { token: after.tokens.admin });
        expect(deleted.status).toBe(204);
      }
      expect((await prompt(after, mine[0]!, "hi", after.tokens.admin)).status).toBe(202);
    } finally {
      await (after ?? d).cleanup();
    }
  });
});
