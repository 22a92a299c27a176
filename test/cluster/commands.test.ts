// Cluster mode, commands through nodes that do not own the session: nui HITL answers by request id reach the
// owner; a command to an owner frozen with SIGSTOP runs on the node that takes the session over, once, and a
// retry with the same Idempotency-Key gets the first answer on any node; a session whose harness cannot move
// says so in its status and is refused elsewhere with code `pinned` once its node is gone; a session deleted
// through its owner ends the streams of its watchers on the other nodes; a command without a key that timed out
// on a frozen owner is not run again by that owner when it wakes; a HITL read or wait of an id pending in two
// sessions names one (?sessionId=), and a wait ends with the answer its session's durable log holds, found there
// without ?sessionId= too (its owner frozen, or the request answered before the wait), as a read finds it pending.
import { describe, expect, it } from "vitest";
import type { ClientError } from "../../src/client/errors.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import type { BrainNode } from "../../src/testing/brain-node.js";
import { raw } from "../../src/testing/http.js";
import { useBrainCluster, waitFor } from "./bed.js";

const bed = useBrainCluster();

const logOf = async (node: BrainNode, id: string): Promise<SessionEvent[]> =>
  (await node.client.log(id, 0, 10_000)).events;
const settled = (events: SessionEvent[], turn: string) =>
  events.find((e) => e.type === "turn.settled" && e.turn === turn);
const dense = (events: SessionEvent[]) => events.map((e, i) => e.seq === i + 1).every(Boolean);

describe("cluster commands", () => {
  it("a nui HITL answer sent to a node that does not own the session reaches its owner, and counts once", async () => {
    const [a, b, c] = bed.nodes;
    const id = "h1";
    await b.client.create({
      id,
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const first = await b.client.prompt(id, "echo: one");
    const asked = await waitFor("the permission request", async () =>
      (await logOf(c, id)).find((e) => e.type === "permission.requested"),
    );
    const requestId = (asked.data as { id: string }).id;
    // nui's list of the session's requests, on a node that does not own it, is the owner's.
    const listed = await raw(c.url, "GET", `/api/hitl/requests?pending=true&sessionId=${id}`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body as unknown as { requestId: string }[]).map((r) => r.requestId)).toEqual([requestId]);
    // The tenant's list, on any node, holds every node's pending requests.
    for (const node of [a, c]) {
      const all = await raw(node.url, "GET", "/api/hitl/requests?pending=true");
      expect(all.status, JSON.stringify(all.body)).toBe(200);
      expect((all.body as unknown as { requestId: string }[]).map((r) => r.requestId)).toEqual([requestId]);
    }
    const one = await raw(c.url, "GET", `/api/hitl/requests/${requestId}`);
    expect([one.status, one.body.sessionId]).toEqual([200, id]);
    // A wait on a node that does not have it pending ends with its answer, given through another node.
    const waiting = raw(a.url, "GET", `/api/hitl/requests/${requestId}/wait`);
    // nui's respond names only the request: node-c finds the node that has it pending.
    const answered = await raw(c.url, "POST", `/api/hitl/requests/${requestId}/respond`, {
      body: { answers: { approved: true } },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body).toMatchObject({ requestId, status: "answered" });
    const waited = await waiting;
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    expect(waited.body).toMatchObject({ requestId, status: "answered" });
    const again = await raw(a.url, "POST", `/api/hitl/requests/${requestId}/respond`, {
      body: { status: "declined" },
    });
    expect([404, 409]).toContain(again.status);
    await waitFor("turn one", async () => settled(await logOf(c, id), first.turn));

    // The same through /v1 with an Idempotency-Key: a retry through another node is answered, not applied.
    const second = await a.client.prompt(id, "echo: two");
    const asked2 = await waitFor("the second request", async () =>
      (await logOf(c, id)).filter((e) => e.type === "permission.requested").at(1),
    );
    const id2 = (asked2.data as { id: string }).id;
    await c.client.answer(id, id2, { decision: "deny" }, { key: "answer-2" });
    await a.client.answer(id, id2, { decision: "deny" }, { key: "answer-2" });
    await expect(a.client.answer(id, id2, { decision: "allow" })).rejects.toMatchObject({ status: 409 });
    const log = await waitFor("turn two", async () => {
      const got = await logOf(c, id);
      return settled(got, second.turn) ? got : undefined;
    });
    expect(log.filter((e) => e.type === "permission.resolved").map((e) => e.data)).toEqual([
      {
        id: requestId,
        decision: "allow",
        reason: "approved through the HITL API",
        answered_by: { tenant: "default" },
      },
      { id: id2, decision: "deny", idempotency_key: "answer-2", answered_by: { tenant: "default" } },
    ]);
    expect(dense(log)).toBe(true);
  }, 120_000);

  it("a nui HITL answer naming only a request id pending in sessions on two nodes answers neither: 409 naming both", async () => {
    const [a, b, c] = bed.nodes;
    const sessions: string[] = [];
    for (const [node, id] of [
      [b, "same-b"],
      [c, "same-c"],
    ] as const) {
      await node.client.create({ id, harness: "echo", config: { options: { delay_ms: 25 } } });
      await node.client.prompt(id, Array.from({ length: 400 }, (_, w) => `w${w}`).join(" "));
      const created = await raw(node.url, "POST", "/api/hitl/requests", {
        body: { kind: "question", sessionId: id, requestId: "same", payload: { message: "Which?" } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      sessions.push(id);
    }
    for (const node of [a, b]) {
      const guessed = await raw(node.url, "POST", "/api/hitl/requests/same/respond", {
        body: { answers: { answer: "x" } },
      });
      expect(guessed.status, JSON.stringify(guessed.body)).toBe(409);
      for (const id of sessions) expect(JSON.stringify(guessed.body)).toContain(id);
    }
    const named = await raw(a.url, "POST", "/api/hitl/requests/same/respond?sessionId=same-c", {
      body: { answers: { answer: "c" } },
    });
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    expect((await b.client.session("same-b")).pending?.map((p) => p.id)).toEqual(["same"]);
    for (const id of sessions) await a.client.interrupt(id);
  }, 120_000);

  it("a nui HITL read or wait of a request id pending on two nodes takes ?sessionId=, and is a 409 naming both without it", async () => {
    const [a, b, c] = bed.nodes;
    for (const [node, id] of [
      [b, "twin-b"],
      [c, "twin-c"],
    ] as const) {
      await node.client.create({ id, harness: "echo", config: { options: { delay_ms: 25 } } });
      await node.client.prompt(id, Array.from({ length: 400 }, (_, w) => `w${w}`).join(" "));
      const created = await raw(node.url, "POST", "/api/hitl/requests", {
        body: { kind: "question", sessionId: id, requestId: "twin", payload: { message: "Which?" } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    // On a node with neither, and on one with one of them: which one was meant is not guessed.
    for (const node of [a, b]) {
      for (const path of ["/api/hitl/requests/twin", "/api/hitl/requests/twin/wait"]) {
        const guessed = await raw(node.url, "GET", path);
        expect(guessed.status, JSON.stringify(guessed.body)).toBe(409);
        for (const id of ["twin-b", "twin-c"]) expect(JSON.stringify(guessed.body)).toContain(id);
      }
      for (const id of ["twin-b", "twin-c"]) {
        const one = await raw(node.url, "GET", `/api/hitl/requests/twin?sessionId=${id}`);
        expect([one.status, one.body.sessionId]).toEqual([200, id]);
      }
    }
    const waiting = raw(a.url, "GET", "/api/hitl/requests/twin/wait?sessionId=twin-c");
    const answered = await raw(b.url, "POST", "/api/hitl/requests/twin/respond?sessionId=twin-c", {
      body: { answers: { answer: "c" } },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const waited = await waiting;
    expect([waited.status, waited.body.answers]).toEqual([200, answered.body.answers]);
    // Its session closed once answered: the answer is in its log, which every node reads.
    await c.client.close("twin-c");
    const late = await raw(a.url, "GET", "/api/hitl/requests/twin/wait?sessionId=twin-c");
    expect([late.status, late.body.answers]).toEqual([200, answered.body.answers]);

    // Its owner frozen past the 2 s lookup: the wait waits on, and ends with the answer once there is one.
    b.pause();
    const frozen = raw(a.url, "GET", "/api/hitl/requests/twin/wait?sessionId=twin-b");
    try {
      await new Promise((r) => setTimeout(r, 2500));
    } finally {
      b.resume();
    }
    // Past its lease, a command through node-a takes the session over: the turn node-b left ends, its question
    // given up in the log (or answered, if node-b still serves it), and the wait ends with that.
    await a.client.answer("twin-b", "twin", { answer: "b" }).catch(() => {});
    const thawed = await frozen;
    expect([thawed.status, thawed.body.requestId], JSON.stringify(thawed.body)).toEqual([200, "twin"]);
    await a.client.interrupt("twin-b").catch(() => {});
  }, 120_000);

  it("a nui HITL wait naming no session finds its request in the durable log: answered before it, or its owner frozen", async () => {
    const [a, b] = bed.nodes;
    const ask = async (id: string, requestId: string) => {
      await b.client.create({ id, harness: "echo", config: { options: { delay_ms: 25 } } });
      await b.client.prompt(id, Array.from({ length: 400 }, (_, w) => `w${w}`).join(" "));
      const created = await raw(b.url, "POST", "/api/hitl/requests", {
        body: { kind: "question", sessionId: id, requestId, payload: { message: "Which?" } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    };
    // Answered before the wait: no node has it pending, and node-a has not its session open.
    await ask("early-b", "early");
    const answered = await raw(b.url, "POST", "/api/hitl/requests/early/respond", {
      body: { answers: { answer: "e" } },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const late = await raw(a.url, "GET", "/api/hitl/requests/early/wait");
    expect([late.status, late.body.answers], JSON.stringify(late.body)).toEqual([200, answered.body.answers]);
    await a.client.interrupt("early-b");

    // Its owner frozen from the start: no node answers the lookup, the store's log still has it pending.
    await ask("cold-b", "cold");
    b.pause();
    try {
      const waiting = raw(a.url, "GET", "/api/hitl/requests/cold/wait");
      // Past node-b's lease, node-a takes the session over: the turn node-b left ends, its question given up.
      await a.client.answer("cold-b", "cold", { answer: "b" }).catch(() => {});
      const waited = await waiting;
      expect([waited.status, waited.body.requestId], JSON.stringify(waited.body)).toEqual([200, "cold"]);
    } finally {
      b.resume();
    }
    await a.client.interrupt("cold-b").catch(() => {});
  }, 120_000);

  it("a nui HITL read of a request whose owner is frozen is its pending envelope, from the stored log", async () => {
    const [a, b] = bed.nodes;
    await b.client.create({ id: "still-b", harness: "echo", config: { options: { delay_ms: 25 } } });
    await b.client.prompt("still-b", Array.from({ length: 400 }, (_, w) => `w${w}`).join(" "));
    const created = await raw(b.url, "POST", "/api/hitl/requests", {
      body: { kind: "question", sessionId: "still-b", requestId: "still", payload: { message: "Which?" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    b.pause();
    try {
      // No node answers the lookup (node-b is frozen), and node-a has not the session open.
      const read = await raw(a.url, "GET", "/api/hitl/requests/still");
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(read.body).toMatchObject({ requestId: "still", sessionId: "still-b", kind: "question" });
      expect(read.body.payload).toMatchObject({ message: "Which?" });
      // Naming its session: the owner does not answer the read forwarded to it, past its lease, nor does any node.
      const named = await raw(a.url, "GET", "/api/hitl/requests/still?sessionId=still-b");
      expect([named.status, named.body.requestId], JSON.stringify(named.body)).toEqual([200, "still"]);
    } finally {
      b.resume();
    }
    await a.client.interrupt("still-b").catch(() => {});
  }, 120_000);

  it("a command to a frozen owner runs on the node that takes over, once; a retry with its key gets the first answer", async () => {
    const [a, b, c] = bed.nodes;
    const id = "z1";
    await b.client.create({ id, harness: "echo", config: { options: { delay_ms: 200 } } });
    const one = await b.client.prompt(id, "one");
    await waitFor("turn one and its checkpoint", async () => {
      const got = await logOf(c, id);
      return settled(got, one.turn) && got.some((e) => e.type === "checkpoint.created") ? true : undefined;
    });
    const long = "two three four five six seven eight nine ten eleven twelve";
    const two = await b.client.prompt(id, long, undefined, { key: "k-two" });
    await waitFor("a delta of turn two", async () =>
      (await logOf(c, id)).some((e) => e.type === "assistant.delta" && e.turn === two.turn)
        ? true
        : undefined,
    );
    b.pause();
    const frozenAt = Date.now();
    // The client lost node-b's answer (say) and retries through node-c with the same key. node-c's request to
    // node-b goes unanswered; once node-b's lease expires node-c takes the session over and finds the key in
    // the log: the first turn's id, no second run. One call, no 409 to retry on.
    const retried = await c.client.prompt(id, long, undefined, { key: "k-two" });
    const tookMs = Date.now() - frozenAt;
    expect(retried.turn).toBe(two.turn);
    process.stdout.write(
      `cluster: a command to a frozen owner was answered by node-c ${tookMs} ms after SIGSTOP\n`,
    );
    // A new command through node-a goes to node-c, the owner now; its retry there gets the same turn.
    const three = await a.client.prompt(id, "three", undefined, { key: "k-three" });
    expect((await c.client.prompt(id, "three", undefined, { key: "k-three" })).turn).toBe(three.turn);
    await waitFor("turn three", async () => settled(await logOf(c, id), three.turn));
    b.resume();
    // node-b wakes still holding the session: until it has let go, what it runs is refused (its lease is gone);
    // the same key sent to it again, as a client retrying would, ends with the first answer.
    const throughB = await waitFor("node-b to answer with the first turn", async () => {
      try {
        return await b.client.prompt(id, "three", undefined, { key: "k-three" });
      } catch {
        return undefined;
      }
    });
    expect(throughB.turn).toBe(three.turn);
    const log = await logOf(c, id);
    expect(dense(log)).toBe(true);
    expect(log.filter((e) => e.type === "user.prompt").map((e) => e.data.text)).toEqual([
      "one",
      long,
      "three",
    ]);
    expect(settled(log, two.turn)?.data).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(settled(log, three.turn)?.data).toMatchObject({ status: "completed" });
  }, 180_000);

  it("a watcher on a node that does not own the session is ended when the session is deleted through its owner", async () => {
    const [, b, c] = bed.nodes;
    const id = "gone1";
    await b.client.create({ id, harness: "echo", config: {} });
    const one = await b.client.prompt(id, "one");
    const seen: SessionEvent[] = [];
    // Through node-c, which follows the log node-b writes; it reconnects when a stream ends, as clients do.
    const watching = (async () => {
      for await (const event of c.client.events(id)) seen.push(event);
    })();
    await waitFor("turn one on node-c's stream", async () => settled(seen, one.turn));
    await b.client.delete(id);
    // As on the owner: the stream ends, and the watcher's reconnect finds no session.
    await expect(watching).rejects.toMatchObject({ status: 404 });
  }, 120_000);

  it("a command without a key that waited on a frozen owner runs once: the owner, woken past its lease, does not run it too", async () => {
    const [, b, c] = bed.nodes;
    const id = "fk1";
    await c.client.create({ id, harness: "echo", config: {} });
    const one = await c.client.prompt(id, "one");
    await waitFor("turn one and its checkpoint", async () => {
      const got = await logOf(b, id);
      return settled(got, one.turn) && got.some((e) => e.type === "checkpoint.created") ? true : undefined;
    });
    const forks = async () => (await b.client.sessions()).filter((s) => s.forked_from?.session === id);
    c.pause();
    // node-b's request waits for node-c until it times out, then node-b forks it itself (node-c's lease is gone).
    let fork: Awaited<ReturnType<typeof b.client.fork>>;
    try {
      fork = await b.client.fork(id);
    } finally {
      c.resume();
    }
    // node-c wakes with the request waiting: it has lost its lease, so it answers that it no longer owns the
    // session instead of forking it a second time. A second fork, without the fix, came within a second here.
    await waitFor("a second fork", async () => ((await forks()).length > 1 ? true : undefined), 5000).catch(
      () => {},
    );
    expect((await forks()).map((s) => s.id)).toEqual([fork.id]);
  }, 120_000);

  it("a session whose harness works in a local directory is pinned to its node; another node refuses it with code pinned", async () => {
    const [a, , c] = bed.nodes;
    const id = "pin1";
    await a.client.create({ id, harness: "echo", config: { options: { cwd: "/tmp" } } });
    const one = await a.client.prompt(id, "one");
    await waitFor("turn one", async () => settled(await logOf(c, id), one.turn));
    const view = await c.client.session(id);
    expect(view.pinned).toMatchObject({ node: "node-a" });
    expect(view.pinned?.reason).toContain('options.cwd "/tmp"');
    // While node-a runs it, any node's commands reach it.
    const two = await c.client.prompt(id, "two");
    await waitFor("turn two", async () => settled(await logOf(c, id), two.turn));
    // Closed on node-a (no owner now): a command through node-c goes to node-a by name, which reopens it.
    await a.client.close(id);
    const three = await c.client.prompt(id, "three");
    await waitFor("turn three", async () => settled(await logOf(c, id), three.turn));
    expect((await c.client.session(id)).pinned).toMatchObject({ node: "node-a" });
    await a.kill();
    const refused = await waitFor("the refusal", async () => {
      try {
        await c.client.prompt(id, "four");
        throw new Error("node-c ran a prompt of a session pinned to node-a");
      } catch (err) {
        const e = err as ClientError;
        if (e.code === "pinned") return e;
        if (e.status === 409 && e.code === "conflict") return undefined; // node-a's lease has not expired yet
        throw err;
      }
    });
    expect(refused.status).toBe(409);
    expect(refused.message).toContain("node-a");
    // Its stored log can still be read anywhere; nothing of the refused prompt was written.
    expect((await logOf(c, id)).filter((e) => e.type === "user.prompt")).toHaveLength(3);
  }, 120_000);
});
