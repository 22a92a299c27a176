// Idempotency-Key on a single daemon: a retried command with the same key runs once and gets the first answer,
// whether the retry comes while the first runs, after it, or after the session was closed and reopened (the key
// is read back from the log, which is what makes it hold across cluster nodes too).
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const admin = () => t.tokens.admin;

async function newSession(body: Record<string, unknown> = { harness: "echo" }) {
  const res = await raw(t.url, "POST", "/v1/sessions", { token: admin(), body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function log(id: string): Promise<SessionEvent[]> {
  return (await t.client().log(id, 0, 10_000)).events;
}

const post = (path: string, key: string | undefined, body?: unknown) =>
  raw(t.url, "POST", path, {
    token: admin(),
    ...(body !== undefined ? { body } : {}),
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
  });

/** A session of the echo runner whose tool asks first, its turn waiting on that permission request. */
async function askingEcho(): Promise<{ id: string; turn: string; requestId: string }> {
  const id = await newSession({
    harness: "echo",
    config: { tools: ["echo"] },
    permissions: { tools: { echo: "ask" } },
  });
  const { turn } = await t.client().prompt(id, "echo: hi");
  const asked = await collect(t.client(), id, (e) => e.type === "permission.requested");
  return { id, turn, requestId: (asked.at(-1)!.data as { id: string }).id };
}

describe("Idempotency-Key", () => {
  it("runs a prompt once: a retry, a concurrent retry and one after a reopen all get the first turn", async () => {
    const id = await newSession({ harness: "echo", config: { options: { delay_ms: 30 } } });
    const path = `/v1/sessions/${id}/prompt`;
    const [a, b] = await Promise.all([
      post(path, "k-1", { text: "one two three" }),
      post(path, "k-1", { text: "one two three" }),
    ]);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.body.turn).toBe(a.body.turn);
    await collect(t.client(), id, settled(a.body.turn as string));
    expect((await post(path, "k-1", { text: "one two three" })).body.turn).toBe(a.body.turn);
    // The key lives in the log, not in the daemon's memory: a reopened session still knows it.
    await t.client().close(id);
    expect((await post(path, "k-1", { text: "one two three" })).body.turn).toBe(a.body.turn);
    const prompts = (await log(id)).filter((e) => e.type === "user.prompt");
    expect(prompts.map((e) => e.data)).toEqual([{ text: "one two three", idempotency_key: "k-1" }]);
    // A new key is a new prompt.
    const next = await post(path, "k-2", { text: "again" });
    expect(next.status).toBe(202);
    expect(next.body.turn).not.toBe(a.body.turn);
    await collect(t.client(), id, settled(next.body.turn as string));
  });

  it("refuses a key reused for another command (422) and a malformed key (400 naming the header)", async () => {
    const id = await newSession();
    const first = await post(`/v1/sessions/${id}/prompt`, "same", { text: "hi" });
    await collect(t.client(), id, settled(first.body.turn as string));
    const reused = await post(`/v1/sessions/${id}/checkpoints`, "same");
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
    expect((reused.body.error as { message: string }).message).toContain("user.prompt");
    const bad = await post(`/v1/sessions/${id}/prompt`, "has space", { text: "hi" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ field: "Idempotency-Key" });
    expect((bad.body.error as { message: string }).message).toContain("character 4 is a space");
    const long = await post(`/v1/sessions/${id}/prompt`, "k".repeat(201), { text: "hi" });
    expect((long.body.error as { message: string }).message).toContain("201 characters long");
    // An empty key is not "no key": its client would retry under it and get a second prompt.
    const empty = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "hi" },
      headers: { "Idempotency-Key": "" },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ field: "Idempotency-Key" });
    expect((empty.body.error as { message: string }).message).toContain("it is empty");
    // The client sends the empty key it was given rather than dropping it.
    await expect(t.client().prompt(id, "hi", undefined, { key: "" })).rejects.toThrow("it is empty");
    const prompts = (await log(id)).filter((e) => e.type === "user.prompt");
    expect(prompts).toHaveLength(1);
  });

  it("says what is wrong with a malformed key without echoing it: a token sent by mistake stays out", async () => {
    const id = await newSession();
    const token = admin();
    const bad = await post(`/v1/sessions/${id}/interrupt`, `${token} x`);
    expect(bad.status).toBe(400);
    const message = (bad.body.error as { message: string }).message;
    expect(message).toContain(`character ${token.length + 1} is a space`);
    expect(message).not.toContain(token.slice(0, 8));
  });

  it("refuses a key sent again with another body (422), and takes a retry of a prompt quoting a secret", async () => {
    const id = await newSession({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const prompt = `/v1/sessions/${id}/prompt`;
    // The log holds the prompt with the token redacted: a retry of the same text is still the same prompt.
    const text = `deploy with ${t.tokens.other}`;
    const first = await post(prompt, "b-1", { text });
    expect(first.status).toBe(202);
    await collect(t.client(), id, settled(first.body.turn as string));
    expect((await post(prompt, "b-1", { text })).body.turn).toBe(first.body.turn);
    const other = await post(prompt, "b-1", { text: "drop the staging database" });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
    const said = (other.body.error as { message: string }).message;
    expect(said).toContain(
      'Idempotency-Key "b-1" was already used: its first request, the user.prompt of seq',
    );
    expect(said).toContain("had another body");
    expect(said).toContain("a new command needs a new key");
    const { turn } = await t.client().prompt(id, "echo: hi");
    const asked = await collect(t.client(), id, (e) => e.type === "permission.requested");
    const answer = `/v1/sessions/${id}/requests/${(asked.at(-1)!.data as { id: string }).id}`;
    expect((await post(answer, "b-2", { decision: "deny" })).status).toBe(200);
    // The opposite decision under the key is not the denial's retry: told ok, its client would think it allowed.
    expect((await post(answer, "b-2", { decision: "allow" })).status).toBe(422);
    expect((await post(answer, "b-2", { decision: "deny", reason: "" })).status).toBe(200);
    await collect(t.client(), id, settled(turn));
    const prompts = (await log(id)).filter((e) => e.type === "user.prompt");
    expect(prompts.map((e) => (e.data as { text: string }).text)).toEqual([
      "deploy with [redacted:token]",
      "echo: hi",
    ]);
  });

  it("answers a permission request once: a keyed retry gets ok, an unkeyed second answer 409", async () => {
    const { id, turn, requestId } = await askingEcho();
    const path = `/v1/sessions/${id}/requests/${requestId}`;
    expect((await post(path, "a-1", { decision: "allow" })).status).toBe(200);
    expect((await post(path, "a-1", { decision: "allow" })).status).toBe(200);
    expect((await post(path, undefined, { decision: "deny" })).status).toBe(409);
    await collect(t.client(), id, settled(turn));
    const resolved = (await log(id)).filter((e) => e.type === "permission.resolved");
    expect(resolved.map((e) => e.data)).toEqual([
      {
        id: requestId,
        decision: "allow",
        idempotency_key: "a-1",
        answered_by: { tenant: "default", token: "admin" },
      },
    ]);
  });

  it("refuses (422) an answer's key sent with an answer to another request, naming both", async () => {
    const { id, turn, requestId } = await askingEcho();
    expect(
      (await post(`/v1/sessions/${id}/requests/${requestId}`, "a-1", { decision: "allow" })).status,
    ).toBe(200);
    await collect(t.client(), id, settled(turn));
    const next = await t.client().prompt(id, "echo: again");
    const asked = await collect(
      t.client(),
      id,
      (e) => e.type === "permission.requested" && (e.data as { id: string }).id !== requestId,
    );
    const second = (asked.at(-1)!.data as { id: string }).id;
    const reused = await post(`/v1/sessions/${id}/requests/${second}`, "a-1", { decision: "allow" });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
    expect((reused.body.error as { message: string }).message).toContain(
      `its first request answered request "${requestId}", not "${second}"`,
    );
    expect((await post(`/v1/sessions/${id}/requests/${second}`, "a-2", { decision: "deny" })).status).toBe(
      200,
    );
    await collect(t.client(), id, settled(next.turn));
  });

  it("records who answered: the token's tenant and name and the client it named, never the token", async () => {
    const { id, turn, requestId } = await askingEcho();
    const answered = await raw(t.url, "POST", `/v1/sessions/${id}/requests/${requestId}`, {
      token: admin(),
      body: { decision: "allow" },
      headers: { "X-Brain-Client": "laptop-1" },
    });
    expect(answered.status).toBe(200);
    await collect(t.client(), id, settled(turn));
    const events = await log(id);
    expect(events.find((e) => e.type === "permission.resolved")?.data).toEqual({
      id: requestId,
      decision: "allow",
      answered_by: { tenant: "default", token: "admin", client: "laptop-1" },
    });
    // The harness got the verdict alone: the tool ran.
    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({ is_error: false });
    expect(JSON.stringify(events)).not.toContain(admin());
  });

  it("checkpoints once per key, and a steer and an interrupt with keys are logged once", async () => {
    const id = await newSession({ harness: "echo", config: { options: { delay_ms: 60 } } });
    const { turn } = await t.client().prompt(id, "one two three four five six seven eight nine ten");
    await collect(t.client(), id, (e) => e.type === "assistant.delta");
    for (let i = 0; i < 2; i++) {
      expect((await post(`/v1/sessions/${id}/steer`, "s-1", { text: "left" })).status).toBe(202);
    }
    for (let i = 0; i < 2; i++) {
      expect((await post(`/v1/sessions/${id}/interrupt`, "i-1")).status).toBe(202);
    }
    await collect(t.client(), id, settled(turn));
    const one = await post(`/v1/sessions/${id}/checkpoints`, "c-1");
    const two = await post(`/v1/sessions/${id}/checkpoints`, "c-1");
    expect(one.status).toBe(201);
    expect(two.body).toEqual(one.body);
    const events = await log(id);
    expect(events.filter((e) => e.type === "user.steer")).toHaveLength(1);
    expect(events.filter((e) => e.type === "user.interrupt")).toHaveLength(1);
    expect(events.filter((e) => e.type === "checkpoint.created")).toHaveLength(1);
  });
});
