// A fork's or handoff's history is read from its parent's log when used: a delete of the parent is refused (409,
// naming them) unless forced, and a forced one is answered as before, a retry under its key too.
import { describe, expect, it } from "vitest";
import type { TestDaemon } from "../testing/daemon.js";
import { adminCall as call, checkpointedEchoSession } from "../testing/dependents.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

async function made(d: TestDaemon, route: string, body: unknown): Promise<string> {
  const res = await call(d, "POST", route, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

const refusal = (res: { body: { error?: { code: string; message: string } } }) => res.body.error!;

describe("DELETE of a session others were forked or handed off from", () => {
  it("refuses a forked parent naming the fork, and deletes it once the fork is gone", async () => {
    const id = await checkpointedEchoSession(t);
    const fork = await made(t, `/v1/sessions/${id}/fork`, {});
    const refused = await call(t, "DELETE", `/v1/sessions/${id}`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refusal(refused).code).toBe("conflict");
    expect(refusal(refused).message).toContain(`1 session was forked or handed off from it`);
    expect(refusal(refused).message).toContain(`(${fork})`);
    expect(refusal(refused).message).toContain(`DELETE /v1/sessions/${id}?force=true`);
    expect((await call(t, "GET", `/v1/sessions/${id}`)).status).toBe(200);

    expect((await call(t, "DELETE", `/v1/sessions/${fork}`)).status).toBe(204);
    expect((await call(t, "DELETE", `/v1/sessions/${id}`)).status).toBe(204);
    expect((await call(t, "GET", `/v1/sessions/${id}`)).status).toBe(404);
  });

  it("refuses a handoff's source naming the handoff, and deletes it once the handoff is gone", async () => {
    const id = await checkpointedEchoSession(t);
    const handoff = await made(t, `/v1/sessions/${id}/handoff`, { to: "echo" });
    const refused = await call(t, "DELETE", `/v1/sessions/${id}`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refusal(refused).message).toContain(`(${handoff})`);
    expect((await call(t, "DELETE", `/v1/sessions/${handoff}`)).status).toBe(204);
    expect((await call(t, "DELETE", `/v1/sessions/${id}`)).status).toBe(204);
  });

  it("deletes with ?force=true, the fork kept, and answers the keyed retry as the first", async () => {
    const id = await checkpointedEchoSession(t);
    const fork = await made(t, `/v1/sessions/${id}/fork`, {});
    const handoff = await made(t, `/v1/sessions/${id}/handoff`, { to: "echo" });
    const forced = await call(t, "DELETE", `/v1/sessions/${id}?force=true`, undefined, "force-1");
    expect(forced.status, JSON.stringify(forced.body)).toBe(204);
    expect((await call(t, "GET", `/v1/sessions/${id}`)).status).toBe(404);
    expect((await call(t, "GET", `/v1/sessions/${fork}`)).status).toBe(200);
    expect((await call(t, "GET", `/v1/sessions/${handoff}`)).status).toBe(200);
    const again = await call(t, "DELETE", `/v1/sessions/${id}?force=true`, undefined, "force-1");
    expect(again.status, JSON.stringify(again.body)).toBe(204);

    // A session made again under the id is not the one the fork and handoff came from: nothing depends on it.
    expect((await call(t, "POST", "/v1/sessions", { harness: "echo", id })).status).toBe(201);
    expect((await call(t, "DELETE", `/v1/sessions/${id}`)).status).toBe(204);
  });

  it("names at most five dependents with a count of the rest, and refuses a force that is not true or false", async () => {
    const id = await checkpointedEchoSession(t);
    const forks: string[] = [];
    for (let i = 0; i < 7; i++) forks.push(await made(t, `/v1/sessions/${id}/fork`, {}));
    const refused = await call(t, "DELETE", `/v1/sessions/${id}?force=false`);
    expect(refused.status).toBe(409);
    expect(refusal(refused).message).toContain("7 sessions were forked or handed off from it");
    const named = /\(([^()]*) and 2 more\)/.exec(refusal(refused).message)?.[1]?.split(", ");
    expect(named).toHaveLength(5);
    for (const fork of named!) expect(forks).toContain(fork);
    const bad = await call(t, "DELETE", `/v1/sessions/${id}?force=yes`);
    expect(bad.status).toBe(400);
    expect(refusal(bad).message).toContain('force must be "true" or "false", not "yes"');
    expect((await call(t, "GET", `/v1/sessions/${id}`)).status).toBe(200);
  });
});
