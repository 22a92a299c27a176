// GET /v1/sessions's pages over real HTTP: ?limit= and ?after= walk the caller's sessions oldest first (newest with
// ?order=newest), and a bad limit, cursor or order is a 400 naming it.
import { describe, expect, it } from "vitest";
import { newSession, raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

describe("GET /v1/sessions", () => {
  it("pages the list with ?limit= and ?after=, oldest first, and refuses a bad limit or cursor with 400", async () => {
    for (let i = 0; i < 3; i++) await newSession(t);
    const list = async (query: string) =>
      raw(t.url, "GET", `/v1/sessions${query}`, { token: t.tokens.admin });
    const all = ((await list("")).body as { sessions: { id: string }[]; next?: string }).sessions;
    expect((await list("")).body.next).toBeUndefined();
    const paged: string[] = [];
    let query = "?limit=2";
    for (;;) {
      const page = await list(query);
      expect(page.status).toBe(200);
      const body = page.body as { sessions: { id: string }[]; next?: string };
      expect(body.sessions.length).toBeLessThanOrEqual(2);
      paged.push(...body.sessions.map((s) => s.id));
      if (!body.next) break;
      expect(body.next).toBe(body.sessions.at(-1)?.id);
      query = `?limit=2&after=${body.next}`;
    }
    expect(paged).toEqual(all.map((s) => s.id));
    const last = all.at(-1)!.id;
    expect((await list(`?after=${last}`)).body).toEqual({ sessions: [] });
    expect((await list(`?limit=1000&after=${all[0]!.id}`)).body.sessions).toHaveLength(all.length - 1);
    for (const [bad, field, says] of [
      ["?limit=0", "limit", "from 1 to 1000"],
      ["?limit=1001", "limit", "from 1 to 1000"],
      ["?limit=two", "limit", "from 1 to 1000"],
      ["?limit=-1", "limit", "from 1 to 1000"],
      ["?after=no/such", "after", "session id"],
      ["?after=no-such-session", "after", 'no session "no-such-session"'],
      ["?order=latest", "order", '"oldest" (the default) or "newest"'],
    ] as const) {
      const res = await list(bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error, bad).toMatchObject({ code: "bad_request", field });
      expect((res.body.error as { message: string }).message, bad).toContain(says);
    }
  });

  it("lists newest first with ?order=newest, and its pages walk that order", async () => {
    for (let i = 0; i < 3; i++) await newSession(t);
    const list = async (query: string) =>
      (await raw(t.url, "GET", `/v1/sessions${query}`, { token: t.tokens.admin })).body as {
        sessions: { id: string }[];
        next?: string;
      };
    const oldest = (await list("")).sessions.map((s) => s.id);
    expect((await list("?order=oldest")).sessions.map((s) => s.id)).toEqual(oldest);
    const newest = [...oldest].reverse();
    expect((await list("?order=newest")).sessions.map((s) => s.id)).toEqual(newest);
    const paged: string[] = [];
    let query = "?order=newest&limit=2";
    for (;;) {
      const page = await list(query);
      paged.push(...page.sessions.map((s) => s.id));
      if (!page.next) break;
      query = `?order=newest&limit=2&after=${page.next}`;
    }
    expect(paged).toEqual(newest);
  });

  it("pages only the caller's tenant: another tenant's session is no cursor, and an empty parameter is none", async () => {
    const theirs = await newSession(t, { harness: "echo" }, t.tokens.other);
    const mine = await newSession(t);
    const list = async (query: string, token = t.tokens.admin) =>
      raw(t.url, "GET", `/v1/sessions${query}`, { token });
    const foreign = await list(`?limit=5&after=${theirs}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatchObject({ field: "after" });
    expect((foreign.body.error as { message: string }).message).toContain(`no session "${theirs}"`);
    const ids = async (query: string, token?: string) =>
      ((await list(query, token)).body.sessions as { id: string }[]).map((s) => s.id);
    expect(await ids("?limit=1000", t.tokens.other)).toEqual([theirs]);
    expect(await ids("?limit=1000")).toContain(mine);
    expect(await ids("?limit=1000")).not.toContain(theirs);
    expect(await ids("?limit=&after=")).toEqual(await ids(""));
  });

  it("pages a tenant's few sessions exactly while another tenant holds many more", async () => {
    const mine = [await newSession(t), await newSession(t)];
    const theirs = new Set<string>();
    for (let i = 0; i < 12; i++) theirs.add(await newSession(t, { harness: "echo" }, t.tokens.other));
    const page = async (query: string, token = t.tokens.admin) =>
      (await raw(t.url, "GET", `/v1/sessions${query}`, { token })).body as {
        sessions: { id: string }[];
        next?: string;
      };
    const all = (await page("")).sessions.map((s) => s.id);
    expect(all.slice(-2)).toEqual(mine);
    for (const order of ["oldest", "newest"]) {
      const paged: string[] = [];
      let query = `?order=${order}&limit=1`;
      for (;;) {
        const got = await page(query);
        expect(got.sessions.length).toBeLessThanOrEqual(1);
        paged.push(...got.sessions.map((s) => s.id));
        if (!got.next) break;
        query = `?order=${order}&limit=1&after=${got.next}`;
      }
      expect(paged).toEqual(order === "oldest" ? all : [...all].reverse());
    }
    const other = (await page("?limit=1000", t.tokens.other)).sessions.map((s) => s.id);
    expect(other.filter((id) => theirs.has(id))).toEqual([...theirs]);
    expect(other.filter((id) => all.includes(id))).toEqual([]);
  });
});
