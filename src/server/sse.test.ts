// Event streams over real HTTP: Last-Event-ID replay, many watchers on one session, a slow watcher cut off
// (the fast one unaffected) that resumes from its last id with nothing lost, and replay across a daemon that
// was killed and started again.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createParser } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BrainClient } from "../client/client.js";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { decodeLogText } from "../store/fs/log-format.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";

const dense = (n: number, from = 1) => Array.from({ length: n - from + 1 }, (_, i) => i + from);

describe("event streams", () => {
  let t: TestDaemon;
  beforeAll(async () => {
    t = await startTestDaemon({ sse: { maxBufferBytes: 1024 * 1024, stallMs: 2000 } });
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("answers HEAD with the stream's headers, and opens no stream", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const logged = vi.spyOn(console, "error");
    try {
      const res = await fetch(`${t.url}/v1/sessions/${id}/events`, {
        method: "HEAD",
        headers: { authorization: `Bearer ${t.tokens.admin}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      // The daemon wrote the head a second time and logged ERR_HTTP_HEADERS_SENT for each HEAD.
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("replays after Last-Event-ID or ?after=, then tails live", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    await collect(client, id, settled((await client.prompt(id, "first")).turn));
    const res = await fetch(`${t.url}/v1/sessions/${id}/events`, {
      headers: { authorization: `Bearer ${t.tokens.admin}`, "last-event-id": "4" },
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("retry: 1000");
    await reader.cancel();
    const after = await collect(client, id, settled(), { after: 4 });
    expect(after[0]?.seq).toBe(5);
    const query = await fetch(`${t.url}/v1/sessions/${id}/events?after=2&access_token=${t.tokens.admin}`);
    const text = await readUntil(query, "id: 3\n");
    expect(text).not.toContain("id: 2\n");
    const { turn } = await client.prompt(id, "second");
    const live = await collect(client, id, settled(turn), { after: after.at(-1)!.seq });
    expect(live[0]?.type).toBe("user.prompt");
    expect(live.map((e) => e.seq)).toEqual(dense(live.at(-1)!.seq, after.at(-1)!.seq + 1));
  });

  it("resumes after Last-Event-ID when ?after= is there too, as an EventSource reconnecting does", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    await collect(client, id, settled((await client.prompt(id, "first")).turn));
    const stream = (query: string, lastEventId?: string) =>
      fetch(`${t.url}/v1/sessions/${id}/events?${query}&access_token=${t.tokens.admin}`, {
        headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId },
      });
    const both = await readUntil(await stream("after=0", "4"), "id: 5\n");
    expect(both).not.toMatch(/^id: [1-4]$/m);
    const emptyAfter = await readUntil(await stream("after=", "3"), "id: 4\n");
    expect(emptyAfter).not.toMatch(/^id: [1-3]$/m);
    // An empty header is no cursor (EventSource sends none before its first id): ?after= holds.
    const emptyHeader = await readUntil(await stream("after=2", ""), "id: 3\n");
    expect(emptyHeader).not.toMatch(/^id: [1-2]$/m);
    const path = `/v1/sessions/${id}/events`;
    const badHeader = await raw(t.url, "GET", `${path}?after=0`, {
      token: t.tokens.admin,
      headers: { "last-event-id": "x7" },
    });
    expect(badHeader.status).toBe(400);
    expect(badHeader.body.error).toMatchObject({ field: "Last-Event-ID" });
    expect(JSON.stringify(badHeader.body)).toContain('not \\"x7\\"');
    const badQuery = await raw(t.url, "GET", `${path}?after=-1`, {
      token: t.tokens.admin,
      headers: { "last-event-id": "3" },
    });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error).toMatchObject({ field: "after" });
  });

  it("refuses a cursor past the log's end (400 naming its last seq), as of a session deleted and made again", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const old = await collect(client, id, settled((await client.prompt(id, "first")).turn));
    const cursor = old.at(-1)!.seq;
    await client.delete(id);
    await client.create({ harness: "echo", id });
    const get = (path: string, headers: Record<string, string> = {}) =>
      raw(t.url, "GET", `/v1/sessions/${id}/${path}`, { token: t.tokens.admin, headers });
    const expectRefused = async () => {
      const last = (await client.log(id)).last_seq;
      expect(last).toBeLessThan(cursor);
      const asked: [string, Record<string, string>, string][] = [
        [`log?after=${cursor}`, {}, "after"],
        ["events", { "last-event-id": String(cursor) }, "Last-Event-ID"],
        [`events?after=${cursor}`, {}, "after"],
      ];
      for (const [path, headers, field] of asked) {
        const res = await get(path, headers);
        expect(res.status, path).toBe(400);
        expect(res.body.error).toMatchObject({ code: "bad_request", field });
        const message = (res.body.error as { message: string }).message;
        expect(message).toContain(`${field} ${cursor} is past the end of session ${id}'s log`);
        expect(message).toContain(`resume from ${last} or less`);
      }
    };
    await expectRefused();
    // Not open here: the log's tail says where it ends.
    await client.close(id);
    await expectRefused();
    const last = (await client.log(id)).last_seq;
    const atEnd = await fetch(
      `${t.url}/v1/sessions/${id}/events?after=${last}&access_token=${t.tokens.admin}`,
    );
    expect(atEnd.status).toBe(200);
    await atEnd.body!.cancel();
    expect((await get(`log?after=${last}`)).body).toMatchObject({ events: [], last_seq: last });
  });

  it("gives many watchers the same events, in order, once", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 2 } } });
    const watchers = Array.from({ length: 20 }, (_, i) =>
      collect(
        i % 2 ? t.client({ token: t.tokens.observer }) : client,
        id,
        settled(),
        i % 2 ? { role: "observer" } : {},
      ),
    );
    await waitFor(() => t.daemon.watchers.size >= 20);
    await client.prompt(id, Array.from({ length: 60 }, (_, i) => `w${i}`).join(" "));
    const streams = await Promise.all(watchers);
    const expected = streams[0]!.map((e) => e.seq);
    expect(expected).toEqual(dense(expected.length));
    for (const s of streams) expect(s.map((e) => e.seq)).toEqual(expected);
  });

  it("disconnects a watcher that stops reading, leaves the others be, and it resumes with nothing lost", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const session = await t.daemon.sessions.live({ tenant: "default", role: "controller" }, id);
    const slowBefore = t.daemon.watchers.closed.slow;
    const slow = await pausedStream(t.url, id, t.tokens.admin);
    const total = 3000;
    const fast = collect(client, id, (e) => e.seq === total + 1);
    await waitFor(() => t.daemon.watchers.size >= 2);
    const big = "z".repeat(4000);
    // 12 MB in 40 KB commits: the watcher that stops reading passes 1 MiB unsent, then stalls past stallMs.
    for (let i = 0; i < total; i += 10) {
      const batch: NewEvent[] = Array.from({ length: 10 }, (_, j) => ({
        type: "harness.warning",
        data: { message: `${i + j} ${big}` },
      }));
      await session.log.append(batch);
    }
    const fastEvents = await fast;
    expect(fastEvents.map((e) => e.seq)).toEqual(dense(total + 1));
    await waitFor(() => t.daemon.watchers.closed.slow > slowBefore);
    expect(t.daemon.watchers.closed.slow).toBe(slowBefore + 1); // the paused one, not the fast one
    const received = await slow.resume();
    const last = received.at(-1)?.seq ?? 0;
    expect(last).toBeLessThan(total + 1);
    expect(received.map((e) => e.seq)).toEqual(dense(last));
    const rest = await collect(client, id, (e) => e.seq === total + 1, { after: last });
    expect([...received, ...rest].map((e) => e.seq)).toEqual(dense(total + 1));
  });

  it("ends the streams of a deleted session", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const res = await fetch(`${t.url}/v1/sessions/${id}/events`, {
      headers: { authorization: `Bearer ${t.tokens.admin}` },
    });
    const body = res.text();
    await waitFor(() => t.daemon.watchers.size >= 1);
    await client.delete(id);
    expect(await body).toContain("id: 1\n");
    const again = await raw(t.url, "GET", `/v1/sessions/${id}/events`, { token: t.tokens.admin });
    expect(again.status).toBe(404);
  });
});

describe("a daemon killed and started again", () => {
  let home: string;
  let child: ChildProcess | undefined;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "brain-restart-"));
  });
  afterAll(() => {
    child?.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
  });

  it("replays from the last id: no event lost, none doubled", async () => {
    const first = await spawnDaemon(home);
    child = first.child;
    const token = (
      JSON.parse(readFileSync(join(home, "tokens.json"), "utf8")) as { tokens: { token: string }[] }
    ).tokens[0]!.token;
    let client = new BrainClient({ url: first.url, token });
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 30 } } });
    await client.prompt(id, Array.from({ length: 200 }, (_, i) => `word${i}`).join(" "));
    const before = await collect(client, id, (e) => e.type === "assistant.delta" && e.seq >= 12);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));
    const second = await spawnDaemon(home);
    child = second.child;
    client = new BrainClient({ url: second.url, token });
    const after = await collect(client, id, settled(), { after: before.at(-1)!.seq });
    const seen = [...before, ...after];
    const onDisk = decodeLogText(readFileSync(join(home, "sessions", id, "events.jsonl"), "utf8")).events;
    expect(seen.map((e) => e.seq)).toEqual(dense(seen.length));
    expect(seen).toEqual(onDisk);
    expect(seen.at(-1)?.data).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    second.child.kill("SIGTERM");
    await new Promise((resolve) => second.child.once("exit", resolve));
    child = undefined;
  });
});

async function spawnDaemon(home: string): Promise<{ child: ChildProcess; url: string }> {
  const bin = join(import.meta.dirname, "../../bin/brain.js");
  const child = spawn(process.execPath, [bin, "serve", "--port", "0"], {
    env: { ...process.env, BRAIN_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /brain daemon on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once("exit", (code) => reject(new Error(`brain serve exited (${code}): ${out}`)));
  });
  return { child, url };
}

/** An SSE response whose body is not read (the socket backs up) until resume() drains what arrived. */
async function pausedStream(url: string, id: string, token: string) {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http
      .get(`${url}/v1/sessions/${id}/events`, { headers: { authorization: `Bearer ${token}` } }, resolve)
      .on("error", reject);
  });
  res.pause();
  return {
    resume: () =>
      new Promise<SessionEvent[]>((resolve) => {
        const events: SessionEvent[] = [];
        const parser = createParser({ onEvent: (m) => events.push(JSON.parse(m.data) as SessionEvent) });
        res.on("data", (chunk: Buffer) => parser.feed(chunk.toString()));
        const done = () => resolve(events);
        res.on("end", done);
        res.on("close", done);
        res.on("error", done);
        res.resume();
      }),
  };
}

async function readUntil(res: Response, marker: string): Promise<string> {
  const reader = res.body!.getReader();
  let text = "";
  while (!text.includes(marker)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
  return text;
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
