// Commands between nodes over a real NATS server: what does not fit in one NATS message (max_payload, 1 MB by
// default) is refused with an answer that says so, on either side, and never takes the daemon down.
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsCluster, startNatsCluster } from "../testing/nats-cluster.js";
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
      const ok = await new NatsCommandRouter(senderNc, { prefix: "small" }).forward("s1", prompt("hi"));
      stopSmall();
      expect(ok).toEqual({ status: 202, body: "{}" });
      expect(answered).toBe(1);
    } finally {
      stop();
    }
  });
});
