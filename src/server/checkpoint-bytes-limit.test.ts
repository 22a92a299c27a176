// brain.config.json `limits.log_bytes_per_session` counts a session's checkpoints with its log: a client that
// checkpoints a session again and again is refused once the session holds the bound, as its prompts are, while a
// session with no checkpoint may always take one (to fork from). The bytes are the store's, so a restarted daemon
// refuses the same session.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CheckpointBytes } from "../core/checkpoint-bytes.js";
import { FsSessionStore } from "../store/fs/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled } from "../testing/http.js";

const BOUND = 64 << 10;
const homes: string[] = [];
afterAll(() => Promise.all(homes.map((home) => fs.rm(home, { recursive: true, force: true }))));

async function daemonOn(home?: string, before?: TestDaemon): Promise<TestDaemon> {
  const dir = home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "brain-checkpoint-bytes-")));
  if (!home) homes.push(dir);
  return startTestDaemon({
    home: dir,
    logBytesPerSession: BOUND,
    ...(before ? { tokens: before.tokens } : {}),
  });
}

const checkpoint = (d: TestDaemon, id: string) =>
  raw(d.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: d.tokens.admin });

async function turn(d: TestDaemon, id: string, text: string): Promise<void> {
  const res = await raw(d.url, "POST", `/v1/sessions/${id}/prompt`, {
    token: d.tokens.admin,
    body: { text },
  });
  expect(res.status).toBe(202);
  await collect(d.client(), id, settled(res.body.turn as string));
}

describe("checkpoint bytes per session", () => {
  it("counts checkpoints toward the bound: past it a second checkpoint and a prompt are refused, also after a restart", async () => {
    const d = await daemonOn();
    let after: TestDaemon | undefined;
    try {
      const id = await newSession(d);
      // A prompt whose log is under the bound; the echo transcript checkpointed with it passes it.
      await turn(d, id, "x".repeat(20 << 10));
      expect(await new FsSessionStore(d.home).logBytes(id)).toBeLessThan(BOUND);
      expect((await checkpoint(d, id)).status).toBe(201);
      const refused = await checkpoint(d, id);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({
        code: "limit_reached",
        message: expect.stringMatching(
          new RegExp(
            `session ${id}'s log and 1 checkpoints hold \\d+ bytes on this host, its limit \\(${BOUND}\\).*no more checkpoints.*POST /v1/sessions/${id}/fork.*POST /v1/sessions/${id}/restore.*limits\\.log_bytes_per_session`,
          ),
        ),
      });
      const logged = (await d.client().log(id, 0, 10_000)).events;
      expect(logged.filter((e) => e.type === "checkpoint.created").map((e) => e.data.id)).toEqual(["000001"]);
      const prompt = await raw(d.url, "POST", `/v1/sessions/${id}/prompt`, {
        token: d.tokens.admin,
        body: { text: "more" },
      });
      expect(prompt.status).toBe(429);
      // The way on: a fork from the checkpoint it holds.
      const fork = await raw(d.url, "POST", `/v1/sessions/${id}/fork`, { token: d.tokens.admin, body: {} });
      expect(fork.status).toBe(201);
      await d.cleanup();
      after = await daemonOn(d.home, d);
      expect((await checkpoint(after, id)).status).toBe(429);
    } finally {
      await (after ?? d).cleanup();
    }
  });

  it("takes one of two checkpoints asked for at once on a session under the bound, and refuses the other", async () => {
    const d = await daemonOn();
    try {
      const id = await newSession(d);
      await turn(d, id, "x".repeat(20 << 10));
      // Each is checked before the other is written unless the check and the write are one step.
      const statuses = (await Promise.all([checkpoint(d, id), checkpoint(d, id)])).map((r) => r.status);
      expect(statuses.sort()).toEqual([201, 429]);
      const logged = (await d.client().log(id, 0, 10_000)).events;
      expect(logged.filter((e) => e.type === "checkpoint.created")).toHaveLength(1);
    } finally {
      await d.cleanup();
    }
  });

  it("takes a session's first checkpoint past the bound, and refuses the next", async () => {
    const d = await daemonOn();
    try {
      const id = await newSession(d);
      await turn(d, id, "y".repeat(BOUND));
      expect((await checkpoint(d, id)).status).toBe(201);
      expect((await checkpoint(d, id)).status).toBe(429);
    } finally {
      await d.cleanup();
    }
  });

  it("lets go of a session's counted blobs once it closes here, and counts them again from its manifests", async () => {
    const d = await daemonOn();
    try {
      const held = () => (d.brain as unknown as { checkpointBytes: CheckpointBytes }).checkpointBytes.size;
      const id = await newSession(d);
      await turn(d, id, "x".repeat(20 << 10));
      expect((await checkpoint(d, id)).status).toBe(201);
      expect(held()).toBe(1);
      await d.client().close(id);
      await expect.poll(held).toBe(0);
      // Counted again from the manifests: the second checkpoint is still refused.
      expect((await checkpoint(d, id)).status).toBe(429);
    } finally {
      await d.cleanup();
    }
  });
});
