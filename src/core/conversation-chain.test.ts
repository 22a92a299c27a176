import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import { FsSessionStore } from "../store/fs/index.js";
import { manyDeltas } from "../store/fs/testing/segmented.js";
import { tempDir } from "../testing/brain.js";
import { runInSmallHeap } from "../testing/small-heap.js";
import { ancestorEvents, loggedCheckpoint } from "./conversation-chain.js";
import { transcriptOf } from "./transcript.js";

const record = (id: string, extra: Partial<SessionRecord> = {}): SessionRecord => ({
  id,
  harness: "echo",
  config: {},
  created_at: "2026-12-04T00:00:00.000Z",
  status: "open",
  ...extra,
});

const prompt = (session: string, seq: number, text: string) =>
  ({
    v: 1,
    seq,
    ts: "2026-12-04T00:00:00.000Z",
    session,
    type: "user.prompt",
    data: { text },
  }) as SessionEvent;

function storeOf(records: SessionRecord[], events: Record<string, SessionEvent[]>) {
  return {
    get: async (id: string) => records.find((r) => r.id === id),
    readEvents: async (id: string, range: { after?: number; limit?: number } = {}) => {
      const after = range.after ?? 0;
      return (events[id] ?? []).filter((e) => e.seq > after).slice(0, range.limit);
    },
  };
}

describe("ancestorEvents", () => {
  const parentEvents = { p: [prompt("p", 1, "one"), prompt("p", 2, "two")] };

  it("reads a handoff's source up to the handoff", async () => {
    const parent = record("p", { tenant: "acme" });
    const child = record("c", { tenant: "acme", handoff_from: { session: "p", seq: 1 } });
    const events = await ancestorEvents(storeOf([parent, child], parentEvents), child);
    expect(events.map((e) => e.seq)).toEqual([1]);
  });

  it("brings in nothing from a session of another tenant, whatever the record names", async () => {
    const parent = record("p", { tenant: "acme" });
    for (const tenant of [undefined, "other"]) {
      const child = record("c", { ...(tenant ? { tenant } : {}), handoff_from: { session: "p", seq: 2 } });
      expect(await ancestorEvents(storeOf([parent, child], parentEvents), child)).toEqual([]);
    }
  });

  it("reads a fork's parent up to its checkpoint, and none of it when retention retired the checkpoint's event", async () => {
    const checkpoint = (session: string, seq: number, id: string) =>
      ({
        v: 1,
        seq,
        ts: "2026-12-04T00:00:00.000Z",
        session,
        type: "checkpoint.created",
        data: { id, files: [] },
      }) as SessionEvent;
    const parent = record("p");
    const child = record("c", { forked_from: { session: "p", checkpoint: "cp1" } });
    const whole = { p: [prompt("p", 1, "one"), checkpoint("p", 2, "cp1"), prompt("p", 3, "after the fork")] };
    expect((await ancestorEvents(storeOf([parent, child], whole), child)).map((e) => e.seq)).toEqual([1, 2]);
    // Segments up to seq 2 retired: what is kept all came after the fork's checkpoint.
    const retired = { p: [prompt("p", 3, "after the fork")] };
    expect(await ancestorEvents(storeOf([parent, child], retired), child)).toEqual([]);
  });
});

describe("a long streamed history", () => {
  const event = (session: string, seq: number, type: string, turn: string, data: object) =>
    ({ seq, ts: "2026-12-04T00:00:00.000Z", session, turn, type, data }) as SessionEvent;

  it("is read a page at a time, each run of deltas as one event, for the same transcript", async () => {
    const whole: SessionEvent[] = [];
    const add = (type: string, turn: string, data: object) =>
      whole.push(event("p", whole.length + 1, type, turn, data));
    add("user.prompt", "t1", { text: "one" });
    for (let i = 0; i < 2500; i++) add("assistant.delta", i < 2000 ? "t1" : "t2", { text: `w${i} ` });
    add("assistant.message", "t1", { text: "all of it" });
    add("user.prompt", "t2", { text: "two" });
    for (let i = 0; i < 1500; i++) add("assistant.delta", "t2", { text: `v${i} ` });
    add("turn.settled", "t2", { status: "interrupted" });
    add("checkpoint.created", "t2", { id: "cp1", files: [] });
    add("user.prompt", "t3", { text: "after the fork" });
    const paged = {
      get: async (id: string) => [record("p"), record("c")].find((r) => r.id === id),
      readEvents: async (id: string, range: { after?: number; limit?: number } = {}) => {
        if (range.limit === undefined || range.limit > 1000)
          throw new Error(`read whole (limit ${range.limit})`);
        return (id === "p" ? whole : []).filter((e) => e.seq > (range.after ?? 0)).slice(0, range.limit);
      },
    };
    const fork = record("c", { forked_from: { session: "p", checkpoint: "cp1" } });
    const read = await ancestorEvents(paged, fork);
    expect(read.map((e) => e.type)).toEqual([
      "user.prompt",
      "assistant.delta",
      "assistant.message",
      "user.prompt",
      "assistant.delta",
      "turn.settled",
      "checkpoint.created",
    ]);
    expect(transcriptOf(read)).toEqual(transcriptOf(whole.slice(0, -1)));
    const handoff = record("c", { handoff_from: { session: "p", seq: 1000 } });
    expect(transcriptOf(await ancestorEvents(paged, handoff))).toEqual(transcriptOf(whole.slice(0, 1000)));
  });

  it("of a fork's parent is verified in a small heap, not held whole", async () => {
    // 800k deltas: a few MiB on disk, hundreds of MiB as events. A process with a 96 MiB heap (the host opening a
    // fork of such a session, in small) works out what the fork's native state must hold.
    const home = tempDir("brain-chain-");
    const store = new FsSessionStore(home);
    const parent = await store.create({ id: "p", harness: "echo", config: {} });
    const log = await store.openLog(parent.id);
    await manyDeltas(log, true);
    await log.append([{ type: "checkpoint.created", data: { id: "000001", files: [] } }]);
    await log.close();
    const forked_from = { session: "p", checkpoint: "000001" };
    await store.create({ id: "c", harness: "echo", config: {}, forked_from });
    const dist = (file: string) =>
      JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "../../dist/src", file)).href);
    const script = `const { expectedHistory } = await import(${dist("core/conversation-chain.js")});
      const { FsSessionStore } = await import(${dist("store/fs/index.js")});
      const store = new FsSessionStore(${JSON.stringify(home)});
      const log = await store.openLog("c");
      process.stdout.write(JSON.stringify(await expectedHistory(store, await store.get("c"), log)));
      await log.close();`;
    const stdout = runInSmallHeap(script, 96);
    await import("node:fs/promises").then((fs) => fs.rm(home, { recursive: true, force: true }));
    expect(JSON.parse(stdout)).toEqual({ lastPrompt: "prompt 39", turns: 40, lastKept: "prompt 39" });
  }, 120_000);
});

describe("loggedCheckpoint", () => {
  const checkpoint = (seq: number, id: string) =>
    ({ ...prompt("s", seq, ""), type: "checkpoint.created", data: { id } }) as SessionEvent;
  const events = [
    prompt("s", 1, "one"),
    checkpoint(2, "c1"),
    ...Array.from({ length: 2500 }, (_, i) => prompt("s", i + 3, "x")),
    checkpoint(2503, "c2"),
  ];
  /** The log as a store serves it, refusing a read of it whole: a fork reads its source a page at a time. */
  const paged = {
    read: async (after: number, limit?: number) => {
      if (limit === undefined || limit > 1000) throw new Error(`read whole (limit ${limit})`);
      return events.filter((e) => e.seq > after).slice(0, limit);
    },
  };

  it("finds the checkpoint asked for, or the latest, reading the log a page at a time", async () => {
    expect(await loggedCheckpoint(paged, "latest", "s")).toBe("c2");
    expect(await loggedCheckpoint(paged, "c1", "s")).toBe("c1");
    await expect(loggedCheckpoint(paged, "c9", "s")).rejects.toThrow(
      'no checkpoint "c9" in the log of session s',
    );
  });

  it("takes the newest checkpoint a retired log still records for the latest, the store's only when it records none", async () => {
    const retired = (kept: SessionEvent[]) => ({
      read: async (after: number, limit?: number) => kept.filter((e) => e.seq > after).slice(0, limit),
    });
    // A store numbering another node's never-logged checkpoint last would answer "latest" with that one.
    expect(await loggedCheckpoint(retired(events.slice(2)), "latest", "s")).toBe("c2");
    expect(await loggedCheckpoint(retired(events.slice(2)), "c1", "s")).toBe("c1");
    const warned = new Promise<Error>((resolve) => process.once("warning", resolve));
    expect(await loggedCheckpoint(retired(events.slice(2, 5)), "latest", "s")).toBe("latest");
    expect((await warned).message).toMatch(/session s: the part of its log still held records no checkpoint/);
  });
});
