// brain.config.json `limits.log_bytes_per_session`: a session's log takes its clients' prompts and steers until it
// holds the bound's bytes on disk; past it they are a 429 naming the bound and what to do, what it logged stays,
// a retry of a prompt it already took is answered as before, and other sessions go on. The bytes are counted from
// the store, so a restarted daemon refuses the same session.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { FsSessionStore } from "../store/fs/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled } from "../testing/http.js";

const BOUND = 64 << 10;
const PROMPT = "x".repeat(12 << 10);
const homes: string[] = [];
afterAll(() => Promise.all(homes.map((home) => fs.rm(home, { recursive: true, force: true }))));

async function daemonOn(home?: string, before?: TestDaemon): Promise<TestDaemon> {
  const dir = home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "brain-log-bytes-")));
  if (!home) homes.push(dir);
  return startTestDaemon({
    home: dir,
    logBytesPerSession: BOUND,
    ...(before ? { tokens: before.tokens } : {}),
  });
}

const prompt = (d: TestDaemon, id: string, text: string, key?: string, token = d.tokens.admin) =>
  raw(d.url, "POST", `/v1/sessions/${id}/prompt`, {
    token,
    body: { text },
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
  });

async function prompts(d: TestDaemon, id: string): Promise<SessionEvent[]> {
  return (await d.client().log(id, 0, 10_000)).events.filter((e) => e.type === "user.prompt");
}

describe("log bytes per session", () => {
  it("refuses a session's prompts once its log holds the bound, and keeps refusing after a restart", async () => {
    const d = await daemonOn();
    let after: TestDaemon | undefined;
    try {
      const id = await newSession(d);
      const store = new FsSessionStore(d.home);
      const taken: string[] = [];
      let refused: Awaited<ReturnType<typeof prompt>> | undefined;
      // Each turn logs the prompt and its echo: the bound is passed within a few turns.
      for (let i = 0; i < 16 && !refused; i++) {
        const res = await prompt(d, id, PROMPT, `k-${i}`);
        if (res.status !== 202) {
          refused = res;
          break;
        }
        taken.push(res.body.turn as string);
        await collect(d.client(), id, settled(res.body.turn as string));
      }
      expect(refused?.status).toBe(429);
      expect(refused?.body.error).toMatchObject({
        code: "limit_reached",
        message: expect.stringMatching(
          new RegExp(
            `session ${id}'s log and 0 checkpoints hold \\d+ bytes on this host, its limit \\(${BOUND}\\).*fork it.*limits\\.log_bytes_per_session`,
          ),
        ),
      });
      expect(await store.logBytes(id)).toBeGreaterThanOrEqual(BOUND);
      // Every prompt it took is in the log; the refused one is not.
      expect((await prompts(d, id)).map((e) => e.turn)).toEqual(taken);
      // A retry of a prompt it took is that prompt's answer, not a refusal.
      const retried = await prompt(d, id, PROMPT, "k-0");
      expect(retried.status).toBe(202);
      expect(retried.body.turn).toBe(taken[0]);
      // Another session, of this tenant or another, goes on.
      expect((await prompt(d, await newSession(d), "hi")).status).toBe(202);
      const theirs = await newSession(d, { harness: "echo" }, d.tokens.other);
      expect((await prompt(d, theirs, "hi", undefined, d.tokens.other)).status).toBe(202);

      await d.cleanup();
      after = await daemonOn(d.home, d);
      const again = await prompt(after, id, "one more");
      expect(again.status).toBe(429);
      expect((await prompts(after, id)).map((e) => e.turn)).toEqual(taken);
    } finally {
      await (after ?? d).cleanup();
    }
  });

  it("refuses a steer and a nui HITL request once the log holds the bound", async () => {
    const d = await daemonOn();
    try {
      const id = await newSession(d, {
        harness: "echo",
        config: { tools: ["echo"] },
        permissions: { tools: { echo: "ask" } },
      });
      // One prompt past the bound, its turn held on a permission request: still running when the steer comes.
      const res = await prompt(d, id, `echo: ${"y".repeat(BOUND)}`);
      expect(res.status).toBe(202);
      await collect(d.client(), id, (e) => e.type === "permission.requested");
      const steer = await raw(d.url, "POST", `/v1/sessions/${id}/steer`, {
        token: d.tokens.admin,
        body: { text: "and this" },
      });
      expect(steer.status).toBe(429);
      expect(steer.body.error).toMatchObject({ code: "limit_reached" });
      // A nui HITL request goes into the log as well.
      const request = {
        kind: "approval",
        sessionId: id,
        requestId: "big-1",
        payload: { message: "Ship it?" },
      };
      const hitl = await raw(d.url, "POST", "/api/hitl/requests", { token: d.tokens.admin, body: request });
      expect(hitl.status).toBe(429);
      expect(hitl.body.error).toMatchObject({ code: "limit_reached" });
      const logged = (await d.client().log(id, 0, 10_000)).events;
      expect(logged.filter((e) => e.type === "user.steer")).toEqual([]);
      expect(logged.filter((e) => JSON.stringify(e.data).includes("big-1"))).toEqual([]);
    } finally {
      await d.cleanup();
    }
  });
});
