// Commands between nodes over a real NATS server: what does not fit in one NATS message (max_payload, 1 MB by
// default) is refused with an answer that says so, on either side, and never takes the daemon down; a command
// without a key that a live owner answers too slowly is refused rather than run a second time on the sender. What
// one node gets from another is checked: a message that is not a request or an answer is refused or left out,
// one sent on a session's subject for another session is not run, and a newer node's extra field is ignored.
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsCluster, startNatsCluster } from "../testing/nats-cluster.js";
import { ApiError } from "./errors.js";
import { NatsCommandRouter } from "./nats-commands.js";
import type { RoutedRequest, RoutedResponse } from "./routing.js";

let cluster: NatsCluster;
let ownerNc: NatsConnection;
let senderNc: NatsConnection;
beforeAll(async () => {
  cluster = await startNatsCluster({ nodes: 1 });
  ownerNc = await cluster.connect("owner");
  senderNc = await cluster.connect("sender");
}, 120_000);
afterAll(async () => {
  await ownerNc?.close();
  await senderNc?.close();
  await cluster?.stop();
});

const prompt = (text: string): RoutedRequest => ({
  method: "POST",
  path: "/v1/sessions/s1/prompt",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ text }),
});

describe("commands forwarded over NATS", () => {
  it("an owner's answer past max_payload reaches the sender as a 502 that says so, and the owner lives on", async () => {
    const owner = new NatsCommandRouter(ownerNc, { prefix: "big" });
    const sender = new NatsCommandRouter(senderNc, { prefix: "big" });
    const limit = ownerNc.info!.max_payload;
    let answered = 0;
    const stop = owner.serve("s1", async (): Promise<RoutedResponse> => {
      answered++;
      return { status: 200, contentType: "application/json", body: JSON.stringify("x".repeat(limit)) };
    });
    await ownerNc.flush();
    try {
      const answer = await sender.forward("s1", prompt("hi"));
      expect(answer?.status).toBe(502);
      expect(JSON.parse(answer!.body).error.message).toMatch(
        new RegExp(
          `answered 200 with \\d+ bytes, more than NATS carries between nodes \\(max_payload ${limit}\\)`,
        ),
      );
      // The owner still serves: a small answer goes through as before.
      const small = new NatsCommandRouter(ownerNc, { prefix: "small" });
      const stopSmall = small.serve("s1", async () => ({ status: 202, body: "{}" }));
      // The subscription reaches the server with the next flush: asked before that, nobody would answer.
      await ownerNc.flush();
      const ok = await new NatsCommandRouter(senderNc, { prefix: "small" }).forward("s1", prompt("hi"));
      stopSmall();
      expect(ok).toEqual({ status: 202, body: "{}" });
      expect(answered).toBe(1);
    } finally {
      stop();
    }
  });

  it("a request past max_payload is refused as too large by the node that would forward it, naming the limit", async () => {
    const owner = new NatsCommandRouter(ownerNc, { prefix: "body" });
    const sender = new NatsCommandRouter(senderNc, { prefix: "body" });
    const limit = senderNc.info!.max_payload;
    const seen: RoutedRequest[] = [];
    const stop = owner.serve("s1", async (request) => {
      seen.push(request);
      return { status: 202, body: "{}" };
    });
    try {
      const refused = await sender.forward("s1", prompt("y".repeat(limit))).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).status).toBe(413);
      expect((refused as ApiError).message).toMatch(
        new RegExp(`NATS carries at most ${limit} between nodes \\(its max_payload\\): send less`),
      );
      const refusedByName = await sender.toNode("n1", prompt("y".repeat(limit))).catch((err: unknown) => err);
      expect((refusedByName as ApiError).code).toBe("payload_too_large");
      expect(seen).toEqual([]);
    } finally {
      stop();
    }
  });

  it("a command without a key that its owner, alive and holding the session, answers too slowly is not run here: a 503 says so", async () => {
    const owner = new NatsCommandRouter(ownerNc, { prefix: "slow" });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let runs = 0;
    // A fork restoring a large checkpoint, say: it answers long after the sender's timeout.
    const stop = owner.serve("s1", async () => {
      runs++;
      await held;
      return { status: 201, body: "{}" };
    });
    await ownerNc.flush();
    const fork: RoutedRequest = { method: "POST", path: "/v1/sessions/s1/fork", headers: {}, body: "{}" };
    try {
      // The owner's lease still holds: the command may be running there, and a run here would be a second.
      const alive = new NatsCommandRouter(senderNc, {
        prefix: "slow",
        timeoutMs: 300,
        owner: async () => "node-a",
      });
      const refused = await alive.forward("s1", fork).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).status).toBe(503);
      expect((refused as ApiError).message).toMatch(
        /its owner, node node-a, did not answer within 300 ms and still holds the session, so the command may be running there and was not run here/,
      );
      // Its lease gone (the owner dead or frozen past it), the command is this node's to run.
      const gone = new NatsCommandRouter(senderNc, {
        prefix: "slow",
        timeoutMs: 300,
        owner: async () => undefined,
      });
      expect(await gone.forward("s1", fork)).toBeUndefined();
      expect(runs).toBe(2);
    } finally {
      release();
      stop();
    }
  });

  it("a keyed command's retry hears the owner's answer that comes after its keyed wait, many tries later", async () => {
    const owner = new NatsCommandRouter(ownerNc, { prefix: "keyedwait" });
    let asked = 0;
    // The owner where the first request under the key still runs: each retry there waits its keyed wait, then is
    // told so (409), long after one try of the sender's.
    const stop = owner.serve("s1", async () => {
      asked++;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { status: 409, body: JSON.stringify({ error: { code: "conflict" } }) };
    });
    await ownerNc.flush();
    const sender = new NatsCommandRouter(senderNc, {
      prefix: "keyedwait",
      attemptMs: 200,
      patienceMs: 6000,
      owner: async () => "node-a",
    });
    try {
      const answer = await sender
        .forward("s1", prompt("again"), { retry: true })
        .catch((err: unknown) => err);
      expect(answer).toMatchObject({ status: 409 });
      expect(asked).toBeGreaterThan(1);
    } finally {
      stop();
    }
  });

  it("a command reaching a node whose lease on the session ran out is not run there, and its sender takes the session as ownerless", async () => {
    let runs = 0;
    const owner = new NatsCommandRouter(ownerNc, { prefix: "lost", holds: () => false });
    const stop = owner.serve("s1", async () => {
      runs++;
      return { status: 202, body: "{}" };
    });
    await ownerNc.flush();
    try {
      const sender = new NatsCommandRouter(senderNc, { prefix: "lost" });
      // As with no node serving it: the sender runs the command itself (and claims the session).
      expect(await sender.forward("s1", prompt("hi"))).toBeUndefined();
      expect(runs).toBe(0);
    } finally {
      stop();
    }
  });
});

describe("messages from other nodes", () => {
  const ask = async (subject: string, data: string) =>
    (await senderNc.request(subject, data, { timeout: 10_000 })).json<RoutedResponse>();

  it("a request that is not one, or names another session than its subject's, is refused and never run", async () => {
    const owner = new NatsCommandRouter(ownerNc, { prefix: "odd" });
    const seen: RoutedRequest[] = [];
    const stop = owner.serve("s1", async (request) => {
      seen.push(request);
      return { status: 202, body: "{}" };
    });
    await ownerNc.flush();
    try {
      for (const data of ["not json", "null", JSON.stringify({ method: "POST", path: 7, headers: {} })]) {
        const answer = await ask("odd.cmd.s1", data);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body).error.message).toMatch(/^not a forwarded request: field "/);
      }
      for (const path of [
        "/v1/sessions/s2/prompt",
        "/v1/%73essions/s2/prompt",
        "/api/hitl/requests/r1?sessionId=s2",
      ]) {
        const answer = await ask("odd.cmd.s1", JSON.stringify({ ...prompt("hi"), path }));
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body).error.message).toContain("a request for session s1 names another");
      }
      expect(seen).toEqual([]);
      // A newer node's field is ignored: the request is run as this node knows it.
      const newer = await ask("odd.cmd.s1", JSON.stringify({ ...prompt("hi"), priority: 1 }));
      expect(newer).toEqual({ status: 202, body: "{}" });
      expect(seen).toEqual([prompt("hi")]);
    } finally {
      stop();
    }
  });

  it("an answer that is not one fails that forward with a 500 saying so, and is left out of a gather", async () => {
    const good = new NatsCommandRouter(ownerNc, { prefix: "junk" });
    const stopGood = good.serveGather(async () => ({ status: 200, body: "[]" }));
    const junk = ownerNc.subscribe("junk.gather", { callback: (_err, msg) => void msg.respond("junk") });
    const owner = ownerNc.subscribe("junk.cmd.s1", { callback: (_err, msg) => void msg.respond("{}") });
    await ownerNc.flush();
    try {
      const sender = new NatsCommandRouter(senderNc, { prefix: "junk" });
      const list = { method: "GET", path: "/api/hitl/requests", headers: {} };
      expect(await sender.gather(list)).toEqual([{ status: 200, body: "[]" }]);
      const failed = await sender.forward("s1", prompt("hi")).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(ApiError);
      expect((failed as ApiError).message).toMatch(
        /the owner of session s1 answered with what is not an answer \(field "status"/,
      );
    } finally {
      stopGood();
      junk.unsubscribe();
      owner.unsubscribe();
    }
  });
});
