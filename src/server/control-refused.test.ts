// A command the daemon refuses leaves control of the session as it was. A client's first driving command takes
// control of a session no one controls; refused (a turn runs, a bad body, a reused key), it took nothing, and
// another client may still drive the session: before, the refused command's client kept control and the other
// client's interrupt was refused 'controlled by client "a"'.
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, newSession, type Raw, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const slow = { options: { delay_ms: 40 } };
const as = (client?: string) => ({
  token: t.tokens.admin,
  ...(client ? { headers: { "x-brain-client": client } } : {}),
});
const controller = async (id: string) =>
  (await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.admin })).body.controller;
/** Each refused with its status (its own refusal, not control's), and no one controls the session after any of them. */
async function refusedLeavingNoController(id: string, calls: [() => Promise<Raw>, number][]) {
  for (const [call, status] of calls) {
    const answer = await call();
    expect(answer).toMatchObject({ status });
    expect(JSON.stringify(answer.body)).not.toContain("controlled by");
    expect(await controller(id)).toBeUndefined();
  }
}

describe("a refused command and control", () => {
  it("takes no control when refused while a turn runs, so another client can interrupt it", async () => {
    const id = await newSession(t, { harness: "echo", config: slow });
    const running = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      ...as(),
      body: { text: "one two three four five six seven eight nine ten eleven twelve" },
    });
    expect(running.status).toBe(202);
    const post = (path: string, body?: object) => () =>
      raw(t.url, "POST", `/v1/sessions/${id}/${path}`, { ...as("a"), ...(body ? { body } : {}) });
    const png = { mime_type: "image/png", data: "iVBORw0KGgo=" };
    await refusedLeavingNoController(id, [
      [post("prompt", { text: "again" }), 409],
      [post("checkpoints"), 409],
      [post("rebuild"), 409],
      [post("requests/no-such-request", { decision: "allow" }), 404],
      [post("prompt", { text: "look", images: [png] }), 400],
    ]);
    const interrupt = await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, as("b"));
    expect(interrupt.body).toEqual({ ok: true });
    expect(await controller(id)).toBe("b");
    await collect(t.client(), id, settled(running.body.turn as string));
  });

  it("takes no control when a steer or interrupt has no turn, or a key was used for another prompt", async () => {
    const id = await newSession(t);
    const first = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      ...as(),
      body: { text: "first" },
      headers: { "Idempotency-Key": "prompt-1" },
    });
    expect(first.status).toBe(202);
    await collect(t.client(), id, settled(first.body.turn as string));
    const post = (path: string, body?: object, headers?: Record<string, string>) => () =>
      raw(t.url, "POST", `/v1/sessions/${id}/${path}`, {
        token: t.tokens.admin,
        headers: { "x-brain-client": "a", ...headers },
        ...(body ? { body } : {}),
      });
    await refusedLeavingNoController(id, [
      [post("steer", { text: "left" }), 409],
      [post("interrupt"), 409],
      [post("prompt", { text: "another" }, { "Idempotency-Key": "prompt-1" }), 422],
    ]);
    const other = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, { ...as("b"), body: { text: "b" } });
    expect(other.status).toBe(202);
    expect(await controller(id)).toBe("b");
    await collect(t.client(), id, settled(other.body.turn as string));
  });

  it("leaves a controller in control when its own command is refused", async () => {
    const id = await newSession(t);
    await t.client({ client: "x" }).takeControl(id, "x");
    const steer = await raw(t.url, "POST", `/v1/sessions/${id}/steer`, { ...as("x"), body: { text: "s" } });
    expect(steer.status).toBe(409);
    expect(await controller(id)).toBe("x");
  });

  it("takes no control when a prompt is refused (429) because the session's log holds its bound", async () => {
    const d = await startTestDaemon({ logBytesPerSession: 16 << 10 });
    try {
      const id = await newSession(d);
      const prompt = (client?: string) =>
        raw(d.url, "POST", `/v1/sessions/${id}/prompt`, {
          token: d.tokens.admin,
          body: { text: "x".repeat(6 << 10) },
          ...(client ? { headers: { "x-brain-client": client } } : {}),
        });
      // Each turn logs the prompt and its echo: the bound is passed within a few turns.
      for (let i = 0; i < 8; i++) {
        const taken = await prompt();
        if (taken.status !== 202) break;
        await collect(d.client(), id, settled(taken.body.turn as string));
      }
      const refused = await prompt("a");
      expect(refused.status).toBe(429);
      expect(JSON.stringify(refused.body)).not.toContain("controlled by");
      expect(
        (await raw(d.url, "GET", `/v1/sessions/${id}`, { token: d.tokens.admin })).body.controller,
      ).toBeUndefined();
    } finally {
      await d.cleanup();
    }
  });
});
