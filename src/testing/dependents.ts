// Sessions others depend on, for the tests of deleting them (src/server/delete-dependents*.test.ts): an admin's
// request to a test daemon, with a body and an Idempotency-Key when given, and a source session to fork or hand off.
import { expect } from "vitest";
import type { TestDaemon } from "./daemon.js";
import { collect, raw, settled } from "./http.js";

/** `method route` on daemon `d` as its admin, with `body` and under Idempotency-Key `key` when given. */
export const adminCall = (
  d: TestDaemon,
  method: "GET" | "POST" | "DELETE",
  route: string,
  body?: unknown,
  key?: string,
) =>
  raw(d.url, method, route, {
    token: d.tokens.admin,
    ...(body === undefined ? {} : { body }),
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
  });

/** A session of the echo runner with one turn and a checkpoint of it. */
export async function checkpointedEchoSession(d: TestDaemon): Promise<string> {
  const client = d.client();
  const id = (await adminCall(d, "POST", "/v1/sessions", { harness: "echo" })).body.id as string;
  await collect(client, id, settled((await client.prompt(id, "remember the parrot")).turn));
  expect((await adminCall(d, "POST", `/v1/sessions/${id}/checkpoints`, {})).status).toBe(201);
  return id;
}
