// Cluster mode end to end: a 3-node NATS cluster (R3) and Brain nodes running `brain serve --nats`, each in its
// own temp dir. The owner of a session is SIGKILLed mid-turn: another node takes the session over (once the
// lease has expired), restores its last checkpoint, settles the interrupted turn as failed with brain_error,
// and the next prompt continues from the checkpointed history. No acknowledged event is lost or doubled.
// A nui HITL answer to a request of a session whose owner died opens it on the node asked, and is refused there
// saying the request was given up with its turn.
import { describe, expect, it } from "vitest";
import type { ClientError } from "../../src/client/errors.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import type { BrainNode } from "../../src/testing/brain-node.js";
import { raw } from "../../src/testing/http.js";
import { useBrainCluster, waitFor } from "./bed.js";

const bed = useBrainCluster();

/** The whole log, as a client of `node` reads it. */
async function events(node: BrainNode): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for (;;) {
    const page = await node.client.log("f1", out.at(-1)?.seq ?? 0, 1000);
    out.push(...page.events);
    if (page.events.length === 0 || (out.at(-1)?.seq ?? 0) >= page.last_seq) return out;
  }
}

function settled(events: SessionEvent[], turn: string): SessionEvent | undefined {
  return events.find((e) => e.type === "turn.settled" && e.turn === turn);
}

describe("cluster failover", () => {
  it("a client of one node drives a session another node owns: prompt, steer, interrupt, answer, checkpoint", async () => {
    const [, b, c] = bed.nodes;
    const id = "r1";
    await b.client.create({
      id,
      harness: "echo",
      config: { options: { delay_ms: 150 }, tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const all = async () => (await c.client.log(id, 0, 1000)).events;
    // Through node-c, which forwards each command to node-b (the session stays open there only).
    const first = await c.client.prompt(id, "echo: hi");
    const asked = await waitFor("the permission request", async () =>
      (await all()).find((e) => e.type === "permission.requested"),
    );
    await c.client.answer(id, (asked.data as { id: string }).id, { decision: "allow" });
    await waitFor("turn one", async () => settled(await all(), first.turn));
    const second = await c.client.prompt(
      id,
      "one two three four five six seven eight nine ten eleven twelve",
    );
    await waitFor("a delta", async () =>
      (await all()).some((e) => e.type === "assistant.delta" && e.turn === second.turn) ? true : undefined,
    );
    await c.client.steer(id, "left");
    await waitFor("the steer", async () =>
      (await all()).some((e) => e.type === "user.steer" && e.turn === second.turn) ? true : undefined,
    );
    await c.client.interrupt(id);
    const events = await waitFor("turn two", async () => {
      const got = await all();
      return settled(got, second.turn) ? got : undefined;
    });
    expect(settled(events, first.turn)?.data).toMatchObject({ status: "completed" });
    expect(events.find((e) => e.type === "permission.resolved")?.data).toMatchObject({ decision: "allow" });
    expect(settled(events, second.turn)?.data).toMatchObject({ status: "interrupted" });
    const checkpoint = await c.client.checkpoint(id);
    expect(checkpoint.id).toMatch(/^\d+$/);
    expect((await all()).map((e) => e.seq)).toEqual(
      Array.from({ length: (await all()).length }, (_, i) => i + 1),
    );
  }, 120_000);

  it("another node takes over a session whose owner was SIGKILLed mid-turn", async () => {
    const [a, b, c] = bed.nodes;
    await a.client.create({ id: "f1", harness: "echo", config: { options: { delay_ms: 200 } } });
    // An SSE watcher on a node that never owns the session: it follows the log through NATS.
    const watched: SessionEvent[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      for await (const event of c.client.events("f1", { signal: abort.signal, role: "observer" }))
        watched.push(event);
    })().catch(() => {});
    const first = await a.client.prompt("f1", "one");
    await waitFor("turn one", async () => settled(await events(a), first.turn));
    // The turn's checkpoint follows its settlement.
    await waitFor("the checkpoint", async () =>
      (await events(a)).find((e) => e.type === "checkpoint.created") ? true : undefined,
    );
    const second = await a.client.prompt("f1", "two three four five six seven eight nine ten");
    await waitFor("deltas of turn two", async () =>
      (await events(a)).some((e) => e.type === "assistant.delta" && e.turn === second.turn)
        ? true
        : undefined,
    );
    const before = await events(a);
    await a.kill();
    const killedAt = Date.now();

    // Any node serves the stored log meanwhile; commands wait for the lease to expire.
    expect((await events(c)).length).toBeGreaterThanOrEqual(before.length);
    const third = await waitFor("the takeover", async () => {
      try {
        return await b.client.prompt("f1", "after");
      } catch (err) {
        if ((err as ClientError).code === "conflict" || (err as ClientError).status === 409) return undefined;
        throw err;
      }
    });
    const takeoverMs = Date.now() - killedAt;
    const log = await waitFor("turn three", async () => {
      const all = await events(b);
      return settled(all, third.turn) ? all : undefined;
    });
    process.stdout.write(`cluster failover: a prompt was taken by node-b ${takeoverMs} ms after the kill\n`);

    const seqs = log.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    // Every event acknowledged before the kill is still there, unchanged.
    expect(log.slice(0, before.length)).toEqual(before);
    expect(settled(log, second.turn)?.data).toMatchObject({
      status: "failed",
      error: { code: "brain_error" },
    });
    // The echo runner numbers turns from its native transcript: restored from the checkpoint after turn one.
    const reply = log.find((e) => e.type === "assistant.message" && e.turn === third.turn);
    expect(reply?.data).toMatchObject({ text: "echo #2: after" });
    expect(settled(log, third.turn)?.data).toMatchObject({ status: "completed" });
    // The watcher on node-c saw every event, in order, once: through the owner's death and the takeover.
    await waitFor("the watcher to see turn three", async () =>
      settled(watched, third.turn) ? true : undefined,
    );
    abort.abort();
    await watching;
    expect(watched.map((e) => e.seq)).toEqual(log.slice(0, watched.length).map((e) => e.seq));
    expect(watched.slice(0, log.length)).toEqual(log.slice(0, watched.length));
  }, 180_000);

  it("an owner stopped past its lease (SIGSTOP) loses the session; after SIGCONT its writes are refused and it lets go", async () => {
    const [, b, c] = bed.nodes;
    const id = "p1";
    await b.client.create({ id, harness: "echo" });
    const all = async () => (await c.client.log(id, 0, 1000)).events;
    const one = await b.client.prompt(id, "one");
    await waitFor("turn one and its checkpoint", async () => {
      const got = await all();
      return settled(got, one.turn) && got.some((e) => e.type === "checkpoint.created") ? true : undefined;
    });
    b.pause();
    // node-c forwards to node-b, which does not answer; once the lease has run out node-c claims the session.
    const two = await waitFor("node-c to take the session", async () => {
      try {
        return await c.client.prompt(id, "two");
      } catch (err) {
        if ((err as ClientError).status === 409) return undefined;
        throw err;
      }
    });
    await waitFor("turn two", async () => settled(await all(), two.turn));
    b.resume();
    // node-b wakes up still holding the session in memory: its lease is gone, so it writes nothing and lets go;
    // a command sent to it reaches node-c.
    // An error here can be ambiguous (node-b forwarded the prompt, node-c ran it, the answer was lost while node-b
    // reconnected): like any careful client, send it under one Idempotency-Key, so a retry runs it once. A look at
    // the log first is not enough: the first may still be on its way to it (seen under load: "three" twice).
    const three = await waitFor("a prompt through node-b", async () => {
      const sent = (await all()).find((e) => e.type === "user.prompt" && e.data.text === "three");
      if (sent?.turn) return { turn: sent.turn };
      try {
        return await b.client.prompt(id, "three", undefined, { key: "failover-three" });
      } catch {
        return undefined;
      }
    });
    const log = await waitFor("turn three", async () => {
      const got = await all();
      return settled(got, three.turn) ? got : undefined;
    });
    const seqs = log.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    expect(log.filter((e) => e.type === "session.closed")).toEqual([]);
    expect(log.filter((e) => e.type === "user.prompt").map((e) => e.data.text)).toEqual([
      "one",
      "two",
      "three",
    ]);
    const reply = log.find((e) => e.type === "assistant.message" && e.turn === three.turn);
    expect(reply?.data).toMatchObject({ text: "echo #3: three" });
  }, 180_000);

  it("a nui HITL answer to a request of a session whose owner died reaches the session, reopened on the node asked", async () => {
    const [, b, c] = bed.nodes;
    const id = "dead-owner";
    await b.client.create({ id, harness: "echo", config: { options: { delay_ms: 25 } } });
    await b.client.prompt(id, Array.from({ length: 400 }, (_, w) => `w${w}`).join(" "));
    const created = await raw(b.url, "POST", "/api/hitl/requests", {
      body: { kind: "question", sessionId: id, requestId: "orphan", payload: { message: "Which?" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await b.kill();
    // Once node-b's lease runs out, node-c opens the session to answer: the turn node-b died in is closed out,
    // its question given up, and the answer is refused saying so, never a 404 that loses it.
    const refused = await waitFor("the answer to be taken up", async () => {
      const res = await raw(c.url, "POST", "/api/hitl/requests/orphan/respond", {
        body: { answers: { answer: "x" } },
      });
      // node-b's lease has not run out yet: the session cannot be opened here until it does.
      return res.status === 409 && !JSON.stringify(res.body).includes("given up") ? undefined : res;
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(JSON.stringify(refused.body)).toContain("given up unanswered");
    const log = (await c.client.log(id, 0, 1000)).events;
    expect(log.filter((e) => e.type === "question.answered").map((e) => e.data)).toMatchObject([
      { id: "orphan", unanswered: "cancelled" },
    ]);
  }, 180_000);
});
