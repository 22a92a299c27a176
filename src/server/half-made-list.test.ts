// GET /v1/sessions leaves out a session whose log was never written: its maker was killed before its first event
// (core/half-made.test.ts: nobody was told of it, and its next open removes it), or is making it now. Told from
// the log file's size, in the stat the list makes for updated_at anyway; a log emptied beside a sealed segment (a
// crash between sealing one and starting the next) is a made session's, and stays listed.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { sealedPath } from "../store/fs/segments.js";
import { FsSessionStore } from "../store/fs/session-store.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, settled } from "../testing/http.js";

let t: TestDaemon;
afterAll(() => t?.cleanup());
beforeAll(async () => {
  t = await startTestDaemon();
});

const get = async (path: string) => {
  const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${t.tokens.admin}` } });
  return {
    status: res.status,
    body: (await res.json()) as { sessions: { id: string; updated_at?: string }[] },
  };
};

it("lists no session whose log was never written, and every made one", async () => {
  const client = t.client();
  const { id: made } = await client.create({ harness: "echo" });
  const { id: rolled } = await client.create({ harness: "echo" });
  await collect(client, rolled, settled((await client.prompt(rolled, "one")).turn));
  await client.close(rolled);
  const file = join(t.home, "sessions", rolled, "events.jsonl");
  renameSync(file, sealedPath(file, 1));
  writeFileSync(file, "");
  // What a maker killed before the first event leaves: the record and an empty log file.
  const halfMade = (await new FsSessionStore(t.home).create({ harness: "echo", config: {} })).id;

  const listed = (await get("/v1/sessions")).body.sessions;
  expect(listed.map((s) => s.id).sort()).toEqual([made, rolled].sort());
  expect(listed.every((s) => s.updated_at !== undefined)).toBe(true);
  // Asked for by id it is still there, until an open removes it.
  expect((await get(`/v1/sessions/${halfMade}`)).status).toBe(200);
  expect((await client.prompt(halfMade, "hi").catch((err: Error) => err)) instanceof Error).toBe(true);
  expect((await get(`/v1/sessions/${halfMade}`)).status).toBe(404);
});
