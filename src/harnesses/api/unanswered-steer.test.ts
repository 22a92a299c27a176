// A steer given during a turn the provider refused before answering anything: the turn is left out of the
// conversation (as the log's transcript leaves it out), and its steer with it.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeBrain, waitForEvent } from "../../testing/brain.js";
import { ApiHarnessFactory } from "./factory.js";
import { apiTestBed } from "./testing/bed.js";
import { FAKE_KEY } from "./testing/provider.js";

const bed = apiTestBed();

// Holds each request until the test answers it, so a steer lands while the turn's first request is in flight.
const bodies: string[] = [];
const waiting: ((res: ServerResponse) => void)[] = [];
const held: ServerResponse[] = [];
const provider = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    bodies.push(body);
    const next = waiting.shift();
    if (next) next(res);
    else held.push(res);
  });
});
const nextRequest = () =>
  new Promise<ServerResponse>((resolve) => {
    const res = held.shift();
    if (res) resolve(res);
    else waiting.push(resolve);
  });
const refuse = (res: ServerResponse) => {
  res.writeHead(400, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long" },
    }),
  );
};
beforeAll(() => new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve)));
afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));

it("is not sent with the next turn when its turn failed before the model answered", async () => {
  const base_url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
  const t = bed.use(
    makeBrain({ factories: [new ApiHarnessFactory()], provider: { api_key: FAKE_KEY, base_url } }),
  );
  const session = await t.brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", options: { retries: 0 } },
  });
  const turn = await session.prompt("a prompt the provider refuses");
  const first = await nextRequest();
  await session.steer("a steer of that turn");
  await waitForEvent(session, (e) => e.type === "user.steer");
  refuse(first);
  expect((await turn.settled).status).toBe("failed");
  const next = await session.prompt("the next prompt");
  refuse(await nextRequest());
  await next.settled;
  expect(bodies[1]).toContain("the next prompt");
  expect(bodies[1]).not.toContain("a prompt the provider refuses");
  expect(bodies[1]).not.toContain("a steer of that turn");
});
