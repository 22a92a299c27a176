// A nui HITL request made once the harness has ended its turn, while its turn.settled is being written: refused
// (no run works now), never logged after turn.settled nor left waiting for an answer no one will give.
import { expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { holdWriteOf } from "../testing/held-write.js";
import { collect, raw, settled } from "../testing/http.js";

it("refuses a request made while the turn settles, and logs nothing after turn.settled", async () => {
  const { io, held, release } = holdWriteOf("turn.settled");
  const t = await startTestDaemon({ factories: [scripted(async () => {})], io });
  try {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted" });
    const { turn } = await client.prompt(id, "go");
    await held;
    const late = raw(t.url, "POST", "/api/hitl/requests", {
      token: t.tokens.admin,
      body: { kind: "approval", sessionId: id, requestId: "late", payload: { toolName: "deploy" } },
    });
    const answer = await late;
    release();
    expect(answer.status, JSON.stringify(answer.body)).toBe(409);
    expect(JSON.stringify(answer.body)).toMatch(/no run is working in session/);
    await collect(client, id, settled(turn));
    const log = (await client.log(id)).events;
    expect(log.at(-1)).toMatchObject({ type: "turn.settled", turn });
    expect(log.some((e) => e.type === "permission.requested")).toBe(false);
  } finally {
    release();
    await t.cleanup();
  }
});
