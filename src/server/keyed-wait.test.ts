// A retry under an Idempotency-Key while the first request under it still runs shares that run; a first run that
// hangs (here: the log's fsync held, as a stalled disk holds it) held every retry with it, for as long as it hung,
// and the client heard nothing again. A retry now waits a bounded time (DaemonOptions.keyedWaitMs), then gets 409
// naming the key and saying the first request still runs; once that ends, a retry under the key gets its answer.
import { afterEach, describe, expect, it } from "vitest";
import { type TestIO, testIO } from "../store/fs/testing/fault-io.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type Raw, raw } from "../testing/http.js";

let t: TestDaemon | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** A daemon whose retries wait for a first run only briefly (the held run never ends while a retry waits). */
async function daemon(): Promise<{ t: TestDaemon; io: TestIO }> {
  const io = testIO();
  t = await startTestDaemon({ io, keyedWaitMs: 50 });
  return { t, io };
}

/**
 * Sends `send` twice at once with the log's next fsync held: one of the two runs first and hangs there, the other
 * is its retry. The retry is told the first still runs; once the disk goes on, the first answers, and so does a
 * later retry, the same.
 */
async function heldTwice(io: TestIO, key: string, send: () => Promise<Raw>): Promise<Raw> {
  const release = io.holdDurable();
  const both = [send(), send()];
  const retry = await Promise.race(both);
  release();
  expect(retry.status, JSON.stringify(retry.body)).toBe(409);
  expect(retry.body.error).toMatchObject({ code: "conflict", field: "Idempotency-Key" });
  const message = (retry.body.error as { message: string }).message;
  expect(message).toContain(`"${key}"`);
  expect(message).toContain("still running");
  const answered = (await Promise.all(both)).filter((res) => res !== retry);
  expect(answered).toHaveLength(1);
  const first = answered[0]!;
  expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
  const later = await send();
  expect(later.status, JSON.stringify(later.body)).toBe(first.status);
  expect(later.body).toEqual(first.body);
  return first;
}

describe("a retry while the first request under its key hangs", () => {
  it("a prompt's: 409 naming the key after a bounded wait, then the first's answer", async () => {
    const { t, io } = await daemon();
    const { id } = await t.client().create({ harness: "echo" });
    const send = () =>
      raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
        token: t.tokens.admin,
        headers: { "Idempotency-Key": "held-prompt" },
        body: { text: "once" },
      });
    const first = await heldTwice(io, "held-prompt", send);
    expect(first.body).toMatchObject({ turn: expect.any(String) });
    const prompts = (await t.client().log(id)).events.filter((e) => e.type === "user.prompt");
    expect(prompts).toHaveLength(1);
  });

  it("a create's: the same, and one session made", async () => {
    const { t, io } = await daemon();
    const send = () =>
      raw(t.url, "POST", "/v1/sessions", {
        token: t.tokens.admin,
        headers: { "Idempotency-Key": "held-create" },
        body: { harness: "echo" },
      });
    await heldTwice(io, "held-create", send);
    expect(await t.client().sessions()).toHaveLength(1);
  });

  it("a delete's: the same, 204 for the first and its later retry", async () => {
    const { t, io } = await daemon();
    const { id } = await t.client().create({ harness: "echo" });
    const send = () =>
      raw(t.url, "DELETE", `/v1/sessions/${id}`, {
        token: t.tokens.admin,
        headers: { "Idempotency-Key": "held-delete" },
      });
    const first = await heldTwice(io, "held-delete", send);
    expect(first.status).toBe(204);
  });
});
