// A cursor before the first seq a log still holds (retention archived or dropped its oldest segments): the SSE
// stream says so once, without an id, then replays from the first kept seq; the JSON page carries first_seq. A
// page of a closed session's log reads from the cursor on and the log's tail only; its view, the tail only.
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PendingRequests } from "../core/pending.js";
import type { SessionEvent } from "../protocol/events.js";
import { decodeLogText, header } from "../store/fs/log-format.js";
import { statePath } from "../store/fs/log-state.js";
import { sealedPath } from "../store/fs/segments.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, settled } from "../testing/http.js";
import { logLine, retireUpTo } from "../testing/retired-log.js";

const line = logLine;

describe("a cursor in a dropped range", () => {
  let t: TestDaemon;
  let id: string;
  let all: SessionEvent[];
  const cut = 3;

  beforeAll(async () => {
    t = await startTestDaemon();
    const client = t.client();
    ({ id } = await client.create({ harness: "echo" }));
    await collect(client, id, settled((await client.prompt(id, "one two three four")).turn));
    await client.close(id);
    all = await retireUpTo(t.home, id, cut);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("streams a dropped notice without an id, then the events from the first kept seq", async () => {
    const res = await fetch(`${t.url}/v1/sessions/${id}/events`, {
      headers: { authorization: `Bearer ${t.tokens.admin}`, "last-event-id": "1" },
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes(`id: ${cut + 1}\n`)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const notice = `event: dropped\ndata: {"after":1,"first_seq":${cut + 1}}\n\n`;
    expect(text).toContain(notice);
    expect(text.indexOf(notice)).toBeLessThan(text.indexOf(`id: ${cut + 1}\n`));
    expect(text).not.toMatch(/id: [123]\n/);
  });

  it("tells the client, which yields every kept event once", async () => {
    const told: [number, number][] = [];
    const client = t.client();
    const abort = new AbortController();
    const seen: SessionEvent[] = [];
    for await (const e of client.events(id, {
      signal: abort.signal,
      onDroppedRange: (after, first) => told.push([after, first]),
    })) {
      seen.push(e);
      if (e.seq === all.at(-1)!.seq) break;
    }
    expect(told).toEqual([[0, cut + 1]]);
    expect(seen.map((e) => e.seq)).toEqual(all.slice(cut).map((e) => e.seq));
  });

  it("says nothing to a cursor in the kept range, and the JSON page carries first_seq", async () => {
    const res = await fetch(`${t.url}/v1/sessions/${id}/events?after=${cut + 1}`, {
      headers: { authorization: `Bearer ${t.tokens.admin}` },
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes(`id: ${cut + 2}\n`)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).not.toContain("event: dropped");
    const page = await fetch(`${t.url}/v1/sessions/${id}/log?after=0`, {
      headers: { authorization: `Bearer ${t.tokens.admin}` },
    }).then((r) => r.json() as Promise<{ events: SessionEvent[]; first_seq?: number; last_seq: number }>);
    expect(page.first_seq).toBe(cut + 1);
    expect(page.events.map((e) => e.seq)).toEqual(all.slice(cut).map((e) => e.seq));
    expect(page.last_seq).toBe(all.at(-1)!.seq);
  });

  /** An echo session with one turn, closed: its log is read from its files, and its events as written. */
  async function closedSession() {
    const client = t.client();
    const { id: other } = await client.create({ harness: "echo" });
    await collect(client, other, settled((await client.prompt(other, "one two three four")).turn));
    await client.close(other);
    const file = join(t.home, "sessions", other, "events.jsonl");
    return { client, other, file, events: decodeLogText(readFileSync(file, "utf8"), other).events };
  }

  it("serves a closed session's page from the cursor on and its log's tail, never what comes before", async () => {
    const { client, other, file, events } = await closedSession();
    const whole = await client.log(other, 0, 10_000);
    expect(whole.events).toEqual(events);
    expect(whole.last_seq).toBe(events.at(-1)!.seq);
    // A first segment damaged in its middle: a page after it must not read it, nor must its last_seq.
    const damaged = `${line(events[0]!)}not an event\n${events.slice(1, cut).map(line).join("")}`;
    writeFileSync(file, header(other) + damaged);
    renameSync(file, sealedPath(file, 1));
    const rest = events.slice(cut).map(line).join("");
    writeFileSync(file, header(other, { seq: cut, requests: [], openTurns: [] }) + rest);
    const page = await client.log(other, cut, 2);
    expect(page).toEqual({ events: events.slice(cut, cut + 2), last_seq: events.at(-1)!.seq });
    const end = await client.log(other, events.at(-1)!.seq, 5);
    expect(end).toEqual({ events: [], last_seq: events.at(-1)!.seq });
    // From the start the damage is met: the page ends before it, with the events before it (damaged-log-read.test.ts).
    expect((await client.log(other, 0, 10)).events).toEqual(events.slice(0, 1));
  });

  it("shows a closed session's last seq and pending requests from its log's tail, a request made before it too", async () => {
    const { client, other, file, events } = await closedSession();
    const { turn, ts } = events.find((e) => e.type === "turn.settled")!;
    let seq = events.at(-1)!.seq;
    const next = (type: string, data: object) =>
      ({ seq: ++seq, ts, session: other, turn, type, data }) as SessionEvent;
    // Two requests made in the first segment; the second segment answers one of them and makes another.
    const early = [
      next("permission.requested", { id: "p-early", tool: "bash" }),
      next("question.requested", { id: "q-early", question: "which?" }),
    ];
    const late = [
      next("question.answered", { id: "q-early", answer: "this" }),
      next("question.requested", { id: "q-late", question: "and then?", options: ["a", "b"] }),
    ];
    // What folding the whole log gives: the view as it was when it read all of it.
    const whole = new PendingRequests();
    for (const e of [...events, ...early, ...late]) whole.observe(e);
    expect(whole.list().map((p) => p.id)).toEqual(["p-early", "q-late"]);
    // A first segment damaged in its middle, and no saved state: only the second's header carries its requests.
    const first = [...events, ...early];
    writeFileSync(
      file,
      `${header(other)}${line(first[0]!)}not an event\n${first.slice(1).map(line).join("")}`,
    );
    renameSync(file, sealedPath(file, 1));
    rmSync(statePath(file), { force: true });
    const base = { seq: early.at(-1)!.seq, requests: early, openTurns: [] };
    writeFileSync(file, header(other, base) + late.map(line).join(""));
    const view = await client.session(other);
    expect(view.last_seq).toBe(seq);
    expect(view.pending).toEqual(JSON.parse(JSON.stringify(whole.list())));
    // Reading the whole log meets the damage after its first event: the page ends there.
    expect((await client.log(other, 0, 10)).events).toEqual(first.slice(0, 1));
  });
});
