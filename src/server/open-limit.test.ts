// brain.config.json `limits`: a tenant past its bound of open sessions is refused (429, naming the bound and what
// to do) when it creates, forks, hands off or reopens one, and past its bound of event streams when it opens
// another; another tenant is not; closing one makes room. Reading or closing a session takes no room: neither is
// refused.
import { describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon({ openSessionsPerTenant: 2, eventStreamsPerTenant: 2 });

const create = (token: string) => raw(t.url, "POST", "/v1/sessions", { token, body: { harness: "echo" } });
const post = (token: string, path: string, body: unknown = {}) => raw(t.url, "POST", path, { token, body });

describe("open sessions per tenant", () => {
  it("refuses a tenant's session past its bound, by name, and leaves another tenant's alone", async () => {
    const a = t.tokens.admin;
    const [first, second] = [await create(a), await create(a)];
    expect([first.status, second.status]).toEqual([201, 201]);
    const refused = await create(a);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: "limit_reached",
      message: expect.stringMatching(
        /tenant "default" has 2 sessions open on this host.*limits\.open_sessions_per_tenant/,
      ),
    });
    const id = first.body.id as string;
    expect((await post(a, `/v1/sessions/${id}/handoff`, { to: "echo" })).status).toBe(429);

    expect((await create(t.tokens.other)).status).toBe(201);

    // Closing one makes room; reopening the closed one (a prompt) is then refused until another closes.
    expect((await post(a, `/v1/sessions/${id}/close`)).status).toBe(200);
    const third = await create(a);
    expect(third.status).toBe(201);
    expect((await post(a, `/v1/sessions/${id}/prompt`, { text: "hi" })).status).toBe(429);
    expect((await post(a, `/v1/sessions/${second.body.id}/close`)).status).toBe(200);
    expect((await post(a, `/v1/sessions/${id}/prompt`, { text: "hi" })).status).toBe(202);
  });

  it("lets a burst of creates past the bound only as far as it goes", async () => {
    // The other tenant holds one session from the test before: one more fits.
    const burst = await Promise.all(Array.from({ length: 4 }, () => create(t.tokens.other)));
    expect(burst.map((r) => r.status).sort()).toEqual([201, 429, 429, 429]);
  });
});

describe("reading or closing a session at the bound", () => {
  it("reads and watches the stored log of one left open (a daemon stopped with it open), opening nothing", async () => {
    const a = t.tokens.admin;
    // The tenant holds its bound (the test before left two open); a session a stopped daemon had open says so.
    expect((await create(a)).status).toBe(429);
    const closed = (await t.client().sessions()).find((s) => s.status === "closed")!;
    await new FsSessionStore(t.home).update(closed.id, { status: "open" });

    const log = await raw(t.url, "GET", `/v1/sessions/${closed.id}/log`, { token: t.tokens.observer });
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect((log.body.events as { type: string }[])[0]?.type).toBe("session.opened");
    const watched = await watchStatus(a, closed.id);
    expect(watched).toBe(200);
    expect(t.brain.liveSession(closed.id)).toBeUndefined();
  });

  it("closes one left open, though closing opens it for a moment", async () => {
    expect((await create(t.tokens.admin)).status).toBe(429);
    const closed = (await t.client().sessions()).find((s) => !t.brain.liveSession(s.id))!;
    await new FsSessionStore(t.home).update(closed.id, { status: "open" });

    const close = await post(t.tokens.admin, `/v1/sessions/${closed.id}/close`);
    expect(close.status, JSON.stringify(close.body)).toBe(200);
    expect(close.body.status).toBe("closed");
    expect((await create(t.tokens.admin)).status).toBe(429);
  });
});

describe("event streams per tenant", () => {
  it("refuses a tenant's stream past its bound before sending anything; one closed makes room", async () => {
    // Watching needs no open session: any of the tenant's will do.
    const id = (await t.client().sessions())[0]!.id;
    const watch = (token: string, signal?: AbortSignal) =>
      fetch(`${t.url}/v1/sessions/${id}/events`, { headers: { authorization: `Bearer ${token}` }, signal });
    const first = new AbortController();
    const open = [await watch(t.tokens.admin, first.signal), await watch(t.tokens.admin)];
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    const refused = await watch(t.tokens.admin);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      error: {
        code: "limit_reached",
        message: expect.stringMatching(
          /tenant "default" has 2 event streams open.*limits\.event_streams_per_tenant/,
        ),
      },
    });
    // The observer's token is the same tenant's; the other tenant's session is its own 404, not a 429.
    expect((await watch(t.tokens.observer)).status).toBe(429);
    expect((await watch(t.tokens.other)).status).toBe(404);

    first.abort();
    await expect.poll(async () => (await watchStatus(t.tokens.admin, id)) === 200).toBe(true);
    open[1]!.body?.cancel();
  });
});

/** Opens a stream and closes it at once: its status. */
async function watchStatus(token: string, id: string): Promise<number> {
  const res = await fetch(`${t.url}/v1/sessions/${id}/events`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await res.body?.cancel();
  return res.status;
}
