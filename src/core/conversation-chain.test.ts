import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import { ancestorEvents, loggedCheckpoint } from "./conversation-chain.js";

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
    readEvents: async (id: string) => events[id] ?? [],
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
});
