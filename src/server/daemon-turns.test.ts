// The daemon's turn routes over real HTTP on loopback: prompt, steer, interrupt and answers, with the refusals
// each gives (409 while a turn runs, 400 naming the field, 404 for unknown or foreign sessions).

import { describe, expect, it } from "vitest";
import { standIn } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled, textOf } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const admin = () => t.tokens.admin;
const slow = { options: { delay_ms: 40 } };

describe("turns", () => {
  it("returns the turn id at once and streams the reply", async () => {
    const client = t.client();
    const id = await newSession(t);
    const { turn } = await client.prompt(id, "hello daemon");
    expect(turn).toMatch(/^[0-9a-f-]{36}$/);
    const events = await collect(client, id, settled(turn));
    expect(textOf(events)).toBe("echo #1: hello daemon");
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.data).toEqual({ status: "completed" });
  });

  it("refuses a prompt while a turn runs (409), an empty one (400), and a missing text (400)", async () => {
    const id = await newSession(t, { harness: "echo", config: slow });
    const first = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "one two three four five six seven eight" },
    });
    expect(first.status).toBe(202);
    const second = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "again" },
    });
    expect(second.status).toBe(409);
    expect((second.body.error as { message: string }).message).toContain("still running");
    const empty = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "" },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ field: "text", message: 'field "text": must not be empty' });
    const missing = await raw(t.url, "POST", `/v1/sessions/${id}/steer`, { token: admin(), body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ field: "text", message: 'field "text": required' });
    await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, { token: admin() });
    await collect(t.client(), id, settled(first.body.turn as string));
  });

  it("refuses images for a harness that takes none (400), and an image without bytes (400 naming it)", async () => {
    const id = await newSession(t);
    const png = { mime_type: "image/png", data: "iVBORw0KGgo=" };
    const none = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "look", images: [png] },
    });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ field: "images" });
    expect((none.body.error as { message: string }).message).toContain('harness "echo" does not take images');
    const empty = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "look", images: [{ data: "" }] },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ field: "images.0.data" });
    const path = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "look", images: [{ path: "/etc/passwd" }] },
    });
    expect(path.status).toBe(400); // bytes only: the daemon reads no path a client names
  });

  it("steers and interrupts the running turn; with none running both get 409", async () => {
    const client = t.client();
    const id = await newSession(t, { harness: "echo", config: slow });
    const { turn } = await client.prompt(
      id,
      "one two three four five six seven eight nine ten eleven twelve",
    );
    await collect(client, id, (e) => e.type === "assistant.delta");
    expect(
      (await raw(t.url, "POST", `/v1/sessions/${id}/steer`, { token: admin(), body: { text: "left" } }))
        .status,
    ).toBe(202);
    await collect(
      client,
      id,
      (e) => e.type === "assistant.delta" && (e.data as { text: string }).text.includes("steered"),
    );
    expect((await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, { token: admin() })).status).toBe(202);
    const events = await collect(client, id, settled(turn));
    expect(events.at(-1)?.data).toEqual({ status: "interrupted" });
    expect(events.some((e) => e.type === "user.interrupt")).toBe(true);
    const none = await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, { token: admin() });
    expect(none.status).toBe(409);
    expect((none.body.error as { message: string }).message).toContain("no turn is running");
    const steer = await raw(t.url, "POST", `/v1/sessions/${id}/steer`, {
      token: admin(),
      body: { text: "x" },
    });
    expect(steer.status).toBe(409);
  });

  it("interrupts a turn whose harness is still starting: the runner is never prompted", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: slow });
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`);
    const { turn } = await client.prompt(id, words.join(" "));
    await client.interrupt(id);
    const events = await collect(client, id, settled(turn));
    expect(events.at(-1)?.data).toEqual({ status: "interrupted" });
    expect(textOf(events)).not.toContain(words.at(-1));
  });

  it("answers a permission request once: the second answer gets 409", async () => {
    const client = t.client();
    const id = await newSession(t, {
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const { turn } = await client.prompt(id, "echo: ping");
    const [asked] = (await collect(client, id, (e) => e.type === "permission.requested")).slice(-1);
    const requestId = (asked!.data as { id: string }).id;
    const view = await client.session(id);
    expect(view.pending?.map((p) => [p.kind, p.id])).toContainEqual(["permission.requested", requestId]);
    const wrongShape = await raw(t.url, "POST", `/v1/sessions/${id}/requests/${requestId}`, {
      token: admin(),
      body: { answer: "yes" },
    });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.error).toMatchObject({ field: "decision" });
    const badDecision = await raw(t.url, "POST", `/v1/sessions/${id}/requests/${requestId}`, {
      token: admin(),
      body: { decision: "maybe" },
    });
    expect(badDecision.status).toBe(400);
    const answers = await Promise.all(
      ["allow", "deny"].map((decision) =>
        raw(t.url, "POST", `/v1/sessions/${id}/requests/${requestId}`, {
          token: admin(),
          body: { decision },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const events = await collect(client, id, settled(turn));
    const resolved = events.filter((e) => e.type === "permission.resolved");
    expect(resolved).toHaveLength(1);
    const unknown = await raw(t.url, "POST", `/v1/sessions/${id}/requests/nope`, {
      token: admin(),
      body: { decision: "allow" },
    });
    expect(unknown.status).toBe(404);
  });

  it("refuses an answer to another session's request as not found (404), not as answered already (409)", async () => {
    const client = t.client();
    const ask = { harness: "echo", config: { tools: ["echo"] }, permissions: { tools: { echo: "ask" } } };
    const [asking, other] = [await newSession(t, ask), await newSession(t, ask)];
    const { turn } = await client.prompt(asking, "echo: ping");
    const [asked] = (await collect(client, asking, (e) => e.type === "permission.requested")).slice(-1);
    const requestId = (asked!.data as { id: string }).id;
    const answer = (session: string) =>
      raw(t.url, "POST", `/v1/sessions/${session}/requests/${requestId}`, {
        token: admin(),
        body: { decision: "allow" },
      });
    const elsewhere = await answer(other);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error).toMatchObject({
      code: "not_found",
      message: expect.stringContaining(`"${requestId}" was asked in session ${other}`),
    });
    expect((await answer(asking)).status).toBe(200);
    await collect(client, asking, settled(turn));
    // Answered: what it was asked in still says so.
    expect((await answer(asking)).status).toBe(409);
  });

  it("shows a pending request's arguments as the log holds them: a secret it redacts is redacted in views too", async () => {
    // The admin token is one of the host's secrets; here another tenant's tool call carries it.
    const token = t.tokens.other;
    const secret = admin();
    const id = await newSession(
      t,
      { harness: "echo", config: { tools: ["echo"] }, permissions: { tools: { echo: "ask" } } },
      token,
    );
    const client = t.client({ token });
    const { turn } = await client.prompt(id, `call the tool "echo" with {"value":"${secret}"}`);
    const asked = (await collect(client, id, (e) => e.type === "permission.requested")).at(-1)!;
    expect(asked.data).toMatchObject({ arguments: { value: "[redacted:token]" } });
    const seen = [
      await raw(t.url, "GET", `/v1/sessions/${id}`, { token }),
      await raw(t.url, "GET", "/v1/sessions", { token }),
      await raw(t.url, "GET", `/api/hitl/requests?sessionId=${id}`, { token }),
    ];
    for (const res of seen) {
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(secret);
    }
    expect(seen[0]!.body.pending).toContainEqual(
      expect.objectContaining({ kind: "permission.requested", data: asked.data }),
    );
    await client.answer(id, (asked.data as { id: string }).id, { decision: "deny" });
    await collect(client, id, settled(turn));
  });
});

/** A harness whose checkpoint stops, once `hold` is called, until released: a checkpoint caught midway. */
function heldCheckpoints() {
  let held: { reached: () => void; released: Promise<void> } | undefined;
  const factory = standIn("held", {
    async checkpoint() {
      const gate = held;
      held = undefined;
      if (gate) {
        gate.reached();
        await gate.released;
      }
      return [];
    },
  });
  const hold = () => {
    let reached!: () => void;
    let release!: () => void;
    const reachedP = new Promise<void>((resolve) => (reached = resolve));
    held = { reached, released: new Promise<void>((resolve) => (release = resolve)) };
    return { reached: reachedP, release };
  };
  return { factory, hold };
}

describe("checkpoints and prompts", () => {
  it("starts a prompt sent during a checkpoint after it, and refuses (409) a checkpoint while a prompt waits", async () => {
    const { factory, hold } = heldCheckpoints();
    const d = await startTestDaemon({ factories: [factory] });
    try {
      const token = d.tokens.admin;
      const id = await newSession(d, { harness: "held" });
      const gate = hold();
      const checkpoint = raw(d.url, "POST", `/v1/sessions/${id}/checkpoints`, { token });
      await gate.reached;
      // A prompt sent now waits for the checkpoint: its turn is not in the files the checkpoint holds.
      const session = await d.brain.session(id);
      const prompted = session.prompt("after the checkpoint");
      const refused = await raw(d.url, "POST", `/v1/sessions/${id}/checkpoints`, { token });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: "conflict" });
      expect((refused.body.error as { message: string }).message).toContain("a prompt is starting a turn");
      gate.release();
      expect((await checkpoint).status).toBe(201);
      const { turn } = await prompted;
      const events = await collect(d.client(), id, settled(turn));
      const types = events.map((e) => e.type).filter((type) => type !== "tool.service");
      expect(types).toEqual([
        "session.opened",
        "checkpoint.created",
        "user.prompt",
        "turn.started",
        "turn.settled",
      ]);
      // Between turns again: a checkpoint is taken, after the turn it now holds.
      expect((await raw(d.url, "POST", `/v1/sessions/${id}/checkpoints`, { token })).status).toBe(201);
    } finally {
      await d.cleanup();
    }
  });

  it("refuses (422) a prompt under the Idempotency-Key of a checkpoint still running, instead of its answer", async () => {
    const { factory, hold } = heldCheckpoints();
    const d = await startTestDaemon({ factories: [factory] });
    try {
      const token = d.tokens.admin;
      const headers = { "Idempotency-Key": "k-shared" };
      const id = await newSession(d, { harness: "held" });
      const gate = hold();
      const checkpoint = raw(d.url, "POST", `/v1/sessions/${id}/checkpoints`, { token, headers });
      await gate.reached;
      const prompt = await raw(d.url, "POST", `/v1/sessions/${id}/prompt`, {
        token,
        headers,
        body: { text: "not a checkpoint" },
      });
      // Let go before the checks: a failed one would otherwise leave the checkpoint (and the cleanup) held.
      gate.release();
      expect(prompt.status).toBe(422);
      expect(prompt.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
      expect((prompt.body.error as { message: string }).message).toContain("checkpoint.created");
      expect((await checkpoint).status).toBe(201);
      const types = (await d.client().log(id)).events.map((e) => e.type);
      expect(types).not.toContain("user.prompt");
    } finally {
      await d.cleanup();
    }
  });
});
