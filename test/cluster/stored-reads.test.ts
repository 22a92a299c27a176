// Cluster mode, nui HITL reads of a session whose owner is frozen (SIGSTOP: alive in NATS, answering nothing): the
// node asked answers from the session's stored log what the owner would, its list of the session's requests and a
// request of several questions with every question, the same envelope the live owner gave; and the same when the
// owner holds the session but is slow to answer (the read waited for it, then was refused with 503), saying so in its
// x-brain-read-from header.
import { Kvm } from "@nats-io/kv";
import { describe, expect, it } from "vitest";
import type { BrainNode } from "../../src/testing/brain-node.js";
import { raw } from "../../src/testing/http.js";
import { useBrainCluster, waitFor } from "./bed.js";

const bed = useBrainCluster();

/** Session `id` on `owner`, in a long turn, with nui request `requestId` of two questions pending in it. */
async function asking(owner: BrainNode, id: string, requestId: string): Promise<void> {
  await owner.client.create({ id, harness: "echo", config: { options: { delay_ms: 25 } } });
  await owner.client.prompt(id, Array.from({ length: 400 }, (_, w) => `w${w}`).join(" "));
  const created = await raw(owner.url, "POST", "/api/hitl/requests", {
    body: {
      kind: "question",
      sessionId: id,
      requestId,
      payload: { message: "Which?", questions: [{ question: "One?" }, { question: "Two?", header: "2" }] },
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}

/**
 * What an envelope says of its request, its times aside (the owner's envelope's are its maker's; the stored log's
 * are those the request was logged with), and the routing its maker gave it (kept with the maker's envelope on the
 * owner, never logged).
 */
const said = (envelope: Record<string, unknown>) => {
  const { createdAt: _c, expiresAt: _e, ttlSeconds: _t, routing: _r, ...rest } = envelope;
  return rest;
};

describe("HITL reads of a session whose owner is frozen", () => {
  it("a read of a request of several questions is the owner's envelope, every question in it", async () => {
    const [a, b] = bed.nodes;
    await asking(b, "multi-b", "multi");
    const live = await raw(b.url, "GET", "/api/hitl/requests/multi");
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    b.pause();
    try {
      const read = await raw(a.url, "GET", "/api/hitl/requests/multi?sessionId=multi-b");
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(said(read.body)).toEqual(said(live.body));
      // Its times are those logged with it: its expiry the owner's envelope gave, asked when its event was logged.
      const asked = (await a.client.log("multi-b", 0, 10_000)).events.find(
        (e) => e.type === "question.requested",
      );
      expect([read.body.createdAt, read.body.expiresAt]).toEqual([asked?.ts, live.body.expiresAt]);
      expect(read.body.ttlSeconds).toBeGreaterThan(0);
    } finally {
      b.resume();
    }
    await a.client.interrupt("multi-b").catch(() => {});
  }, 120_000);

  it("the list of a session's requests is read from its stored log: each request once", async () => {
    const [a, b] = bed.nodes;
    await asking(b, "list-b", "listed");
    const live = await raw(b.url, "GET", "/api/hitl/requests?sessionId=list-b");
    const listedLive = live.body as unknown as Record<string, unknown>[];
    expect([live.status, listedLive.length], JSON.stringify(live.body)).toEqual([200, 1]);
    b.pause();
    try {
      const list = await raw(a.url, "GET", "/api/hitl/requests?sessionId=list-b");
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      expect((list.body as unknown as Record<string, unknown>[]).map(said)).toEqual(listedLive.map(said));
      const other = await raw(a.url, "GET", "/api/hitl/requests?sessionId=list-b&runId=no-such-turn");
      expect([other.status, other.body], JSON.stringify(other.body)).toEqual([200, []]);
    } finally {
      b.resume();
    }
    await a.client.interrupt("list-b").catch(() => {});
  }, 120_000);

  it("a read naming a session whose owner holds it but does not answer is read from the stored log, and says so", async () => {
    const [a, b] = bed.nodes;
    await asking(b, "slow-b", "slow");
    const nc = await bed.nats.connect("slow-owner");
    const owners = await new Kvm(nc).open("brain_owners");
    const lease = JSON.stringify({ node: "slow-owner", since: new Date().toISOString() });
    // An owner alive but slow: it holds the session's lease and answers none of its commands (neither does node-b,
    // frozen, whose subscription NATS keeps).
    nc.subscribe("brain.cmd.slow-b");
    let renewing: NodeJS.Timeout | undefined;
    b.pause();
    try {
      await waitFor("node-b's lease to run out, and the slow owner's claim", async () =>
        (await owners.create("slow-b", lease).catch(() => undefined)) ? true : undefined,
      );
      renewing = setInterval(() => void owners.put("slow-b", lease).catch(() => {}), 200);
      const read = await raw(a.url, "GET", "/api/hitl/requests/slow?sessionId=slow-b");
      expect([read.status, read.body.requestId], JSON.stringify(read.body)).toEqual([200, "slow"]);
      expect(read.headers.get("x-brain-read-from")).toBe("stored-log");
      const list = await raw(a.url, "GET", "/api/hitl/requests?sessionId=slow-b");
      const listed = list.body as unknown as { requestId: string }[];
      expect([list.status, listed.map((r) => r.requestId)], JSON.stringify(list.body)).toEqual([
        200,
        ["slow"],
      ]);
      expect(list.headers.get("x-brain-read-from")).toBe("stored-log");
      // It held the session throughout: these reads met an owner that did not answer, not one gone.
      expect(JSON.parse((await owners.get("slow-b"))!.string()).node).toBe("slow-owner");
    } finally {
      clearInterval(renewing);
      await owners.delete("slow-b").catch(() => {});
      await nc.close();
      b.resume();
    }
    await a.client.interrupt("slow-b").catch(() => {});
  }, 120_000);
});
