import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { startTestDaemon } from "../testing/daemon.js";
import { newSession, raw } from "../testing/http.js";
import { madeSession } from "../testing/made-session.js";
import { runInSmallHeap } from "../testing/small-heap.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-list-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

describe("GET /v1/sessions", () => {
  it("answers a list of large sessions one session at a time: 96 MiB of records through a 96 MiB heap", async () => {
    // 48 sessions of 2 MiB config each, listed whole (no `limit`: every session at once) and as a page. An answer
    // built whole holds every view and its JSON text together.
    const store = new FsSessionStore(home);
    const config = { system_prompt: "x".repeat(2 << 20) };
    for (let i = 0; i < 48; i++) await madeSession(store, { harness: "process", config, id: `s${i}` });
    const daemon = pathToFileURL(path.join(import.meta.dirname, "../../dist/src/testing/daemon.js")).href;
    const script = `const { startTestDaemon } = await import(${JSON.stringify(daemon)});
      const d = await startTestDaemon({ home: ${JSON.stringify(home)} });
      const get = (q) => fetch(d.url + "/v1/sessions" + q, { headers: { authorization: "Bearer " + d.tokens.admin } });
      const whole = await get("");
      let bytes = 0, head = "", tail = "";
      for await (const chunk of whole.body) {
        const text = Buffer.from(chunk).toString("latin1");
        if (head.length < 20) head = (head + text).slice(0, 20);
        tail = (tail + text).slice(-64);
        bytes += chunk.length;
      }
      const page = await (await get("?limit=2&order=newest")).json();
      const out = { status: whole.status, type: whole.headers.get("content-type"), bytes, head, tail };
      out.page = { ids: page.sessions.map((s) => s.id), next: page.next, prompt: page.sessions[0].config.system_prompt.length };
      await d.cleanup();
      process.stdout.write(JSON.stringify(out));`;
    const stdout = runInSmallHeap(script, 96);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ status: 200, type: "application/json", head: '{"sessions":[{"id":"' });
    expect(out.tail).toMatch(/"status":"open","updated_at":"[^"]+"\}\]\}$/);
    expect(out.bytes).toBeGreaterThan(48 * (2 << 20));
    expect(out.page).toEqual({ ids: ["s47", "s46"], next: "s46", prompt: 2 << 20 });
  });

  it("names a session whose record cannot be read, to its tenant only, in its place in the pages", async () => {
    const d = await startTestDaemon({ home });
    try {
      const [first, damaged, last] = [await newSession(d), await newSession(d), await newSession(d)];
      const theirs = await newSession(d, { harness: "echo" }, d.tokens.other);
      const theirsBad = await newSession(d, { harness: "echo" }, d.tokens.other);
      await fs.writeFile(path.join(home, "sessions", damaged, "session.json"), "{not json");
      // Parses, but is no record: its tenant can still be told.
      const record = JSON.parse(
        await fs.readFile(path.join(home, "sessions", theirsBad, "session.json"), "utf8"),
      );
      await fs.writeFile(
        path.join(home, "sessions", theirsBad, "session.json"),
        JSON.stringify({ ...record, harness: 7 }),
      );
      const list = (query: string, token = d.tokens.admin) =>
        raw(d.url, "GET", `/v1/sessions${query}`, { token });

      const all = await list("");
      expect(all.status).toBe(200);
      expect((all.body.sessions as { id: string }[]).map((s) => s.id)).toEqual([first, last]);
      const [entry, ...more] = all.body.unreadable as {
        id: string;
        error: { code: string; message: string };
      }[];
      expect(more).toEqual([]);
      expect(entry).toMatchObject({ id: damaged, error: { code: "brain_error" } });
      const file = `$BRAIN_HOME/sessions/${damaged}/session.json`;
      expect(entry!.error.message).toContain(`${file}: not valid JSON`);
      expect(entry!.error.message).toContain("repair");
      expect(entry!.error.message).not.toContain(home);

      // A page counts it where it stands (unparsed, it stands where its file's mtime puts it: last here).
      const page = await list("?limit=2");
      expect(page.body).toEqual({
        sessions: [expect.objectContaining({ id: first }), expect.anything()],
        next: last,
      });
      const rest = await list(`?limit=2&after=${last}`);
      expect(rest.body).toEqual({ sessions: [], unreadable: [entry] });

      const other = await list("", d.tokens.other);
      expect(other.status).toBe(200);
      expect((other.body.sessions as { id: string }[]).map((s) => s.id)).toEqual([theirs]);
      expect(other.body.unreadable).toMatchObject([{ id: theirsBad, error: { code: "brain_error" } }]);
      expect((other.body.unreadable as { error: { message: string } }[])[0]!.error.message).toContain(
        'field "harness"',
      );
      // Its record still tells when it was made: it keeps its place after the tenant's other session.
      expect((await list("?limit=1", d.tokens.other)).body).toMatchObject({ next: theirs });
      expect(JSON.stringify(other.body)).not.toContain(damaged);
    } finally {
      await d.cleanup();
    }
  });
});

describe("DELETE /v1/sessions/{id} of a session whose record cannot be read", () => {
  it("is its owner's: the tenant its file still names, else the default tenant's only, as the list shows it", async () => {
    const d = await startTestDaemon({ home });
    try {
      const damaged = await newSession(d);
      const theirsBad = await newSession(d, { harness: "echo" }, d.tokens.other);
      const dir = (id: string) => path.join(home, "sessions", id);
      await fs.writeFile(path.join(dir(damaged), "session.json"), "{not json");
      const record = JSON.parse(await fs.readFile(path.join(dir(theirsBad), "session.json"), "utf8"));
      await fs.writeFile(
        path.join(dir(theirsBad), "session.json"),
        JSON.stringify({ ...record, harness: 7 }),
      );
      const del = (id: string, token: string) => raw(d.url, "DELETE", `/v1/sessions/${id}`, { token });
      const exists = (id: string) =>
        fs.stat(dir(id)).then(
          () => true,
          () => false,
        );

      // No tenant can be told from a file that is not JSON: another tenant's token is told there is no such session.
      expect((await del(damaged, d.tokens.other)).status).toBe(404);
      expect((await del(theirsBad, d.tokens.admin)).status).toBe(404);
      expect([await exists(damaged), await exists(theirsBad)]).toEqual([true, true]);

      expect((await del(theirsBad, d.tokens.other)).status).toBe(204);
      expect((await del(damaged, d.tokens.admin)).status).toBe(204);
      expect([await exists(damaged), await exists(theirsBad)]).toEqual([false, false]);
      const listed = await raw(d.url, "GET", "/v1/sessions", { token: d.tokens.admin });
      expect(listed.body).toEqual({ sessions: [] });
    } finally {
      await d.cleanup();
    }
  });
});
