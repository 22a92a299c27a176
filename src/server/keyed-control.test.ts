// Idempotency-Key on POST /v1/sessions/{id}/control: a client whose answer was lost retries the take under its key.
// The retry takes control only once and gets the first answer, the controller it took control from: taken again,
// it would take control back from a client that took it since, and name that client as the one it took it from.
import { describe, expect, it } from "vitest";
import { ClientError } from "../client/errors.js";
import { raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const controller = async (id: string) =>
  (await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.admin })).body.controller;

describe("Idempotency-Key on taking control", () => {
  it("answers a retried take with the first answer, and does not take control back", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const x = t.client({ client: "x" });
    await x.takeControl(id, "x");
    const a = t.client({ client: "a" });
    const first = await a.takeControl(id, "a", { key: "take-1" });
    expect(first).toEqual({ controller: "a", previous: "x" });
    expect(await a.takeControl(id, "a", { key: "take-1" })).toEqual(first);
    // Another client takes control; the first take's late retry leaves it there.
    expect(await t.client({ client: "b" }).takeControl(id, "b", { key: "take-2" })).toEqual({
      controller: "b",
      previous: "a",
    });
    expect(await a.takeControl(id, "a", { key: "take-1" })).toEqual(first);
    expect(await controller(id)).toBe("b");
    // A new take (a new key) takes it.
    expect(await a.takeControl(id, "a", { key: "take-3" })).toEqual({ controller: "a", previous: "b" });
    expect(await controller(id)).toBe("a");
  });

  it("refuses the key with another client, and a malformed key", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    await t.client({ client: "a" }).takeControl(id, "a", { key: "mine" });
    const other = await t
      .client({ client: "c" })
      .takeControl(id, "c", { key: "mine" })
      .catch((err: unknown) => err);
    expect(other).toBeInstanceOf(ClientError);
    expect(other).toMatchObject({ status: 422, code: "idempotency_key_reused", field: "Idempotency-Key" });
    expect((other as ClientError).message).toContain('for another client, "a"');
    expect(await controller(id)).toBe("a");
    const empty = await raw(t.url, "POST", `/v1/sessions/${id}/control`, {
      token: t.tokens.admin,
      body: { client: "c" },
      headers: { "Idempotency-Key": "" },
    });
    expect(empty.status).toBe(400);
    expect(await controller(id)).toBe("a");
  });
});
