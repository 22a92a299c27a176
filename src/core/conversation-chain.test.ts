import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import { ancestorEvents } from "./conversation-chain.js";

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
