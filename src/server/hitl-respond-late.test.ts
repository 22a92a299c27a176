// nui's respond() replies with the answer it logged, found by its request id: before, it looked at the log's last
// 50 events only, and when more became durable with the answer (a busy turn's output), the reply lacked answers.
import { setImmediate as tick } from "node:timers/promises";
import { expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { holdWriteOf } from "../testing/held-write.js";
import { collect, raw, settled } from "../testing/http.js";

function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

it("replies with the logged answer though 60 events were logged in the same batch after it", async () => {
  const { io, held, release } = holdWriteOf("assistant.message");
  const marker = gate();
  const burst = gate();
  const burstSent = gate();
  const harness = scripted(async (options, turn) => {
    const verdict = options.permit(turn, { tool: "deploy" }, new AbortController().signal, {
      id: "req-late",
    });
    await marker.opened;
    options.emit({ type: "assistant.message", turn, data: { text: "held" } } as never);
    await burst.opened;
    for (let i = 0; i < 60; i++)
      options.emit({ type: "assistant.delta", turn, data: { text: "x" } } as never);
    burstSent.open();
    await verdict;
  });
  const t = await startTestDaemon({ factories: [harness], io });
  try {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted", permissions: { tools: { deploy: "ask" } } });
    const { turn } = await client.prompt(id, "go");
    await collect(client, id, (e) => e.type === "permission.requested");
    marker.open();
    await held;
    // The answer is taken at once and queued behind the held write; the burst is queued after it.
    const respond = raw(t.url, "POST", "/api/hitl/requests/req-late/respond", {
      token: t.tokens.admin,
      body: { status: "answered", answers: { approved: true } },
    });
    for (;;) {
      const pending = await raw(t.url, "GET", `/api/hitl/requests?pending=true&sessionId=${id}`, {
        token: t.tokens.admin,
      });
      if ((pending.body as unknown as unknown[]).length === 0) break;
      await tick();
    }
    burst.open();
    await burstSent.opened;
    await tick();
    release();
    const answered = await respond;
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body).toMatchObject({
      requestId: "req-late",
      status: "answered",
      answers: { approved: true, decision: "allow" },
    });
    await collect(client, id, settled(turn));
  } finally {
    release();
    await t.cleanup();
  }
});
