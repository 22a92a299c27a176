// A read right after a NATS node was killed can be answered "JetStream system temporarily unavailable" (503, err
// code 10008) while the cluster elects its meta leader; seen failing nats-log.test.ts's node-kill read. It is asked
// again, as an unanswered request is; an answer such as "stream not found" is not.
import { JetStreamApiError } from "@nats-io/jetstream";
import { expect, it } from "vitest";
import { isUnanswered, retrying } from "./errors.js";

const between = () =>
  new JetStreamApiError({
    code: 503,
    err_code: 10008,
    description: "JetStream system temporarily unavailable",
  });
const missing = () => new JetStreamApiError({ code: 404, err_code: 10059, description: "stream not found" });

it("asks again when JetStream says it is temporarily unavailable, not when it answers", async () => {
  expect([isUnanswered(between()), isUnanswered(missing())]).toEqual([true, false]);
  let asked = 0;
  const read = () => {
    asked += 1;
    return asked < 3 ? Promise.reject(between()) : Promise.resolve("the message");
  };
  await expect(retrying(5_000, read, isUnanswered, (err) => err as Error)).resolves.toBe("the message");
  expect(asked).toBe(3);
});
