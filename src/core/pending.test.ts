// The index of requests waiting for an answer: each is taken exactly once, and they are listed in log order
// whatever their kind.
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../protocol/events.js";
import { PendingRequests } from "./pending.js";

const call = (id: string, turn = "t1"): NewEvent => ({
  type: "tool.call",
  turn,
  data: { id, name: "echo", arguments: {} },
});
const ask = (id: string, turn = "t1"): NewEvent => ({
  type: "permission.requested",
  turn,
  data: { id, tool: "echo" },
});
const question = (id: string, turn = "t1"): NewEvent => ({
  type: "question.requested",
  turn,
  data: { id, question: "why?" },
});

describe("PendingRequests", () => {
  it("lists requests of every kind in the order they were opened, and by turn", () => {
    const pending = new PendingRequests();
    for (const e of [call("a"), ask("p"), call("b", "t2"), question("q"), call("c")]) pending.observe(e);
    expect(pending.list().map((r) => `${r.kind}:${r.id}`)).toEqual([
      "tool.call:a",
      "permission.requested:p",
      "tool.call:b",
      "question.requested:q",
      "tool.call:c",
    ]);
    expect(pending.list("t2").map((r) => r.id)).toEqual(["b"]);
    expect(pending.list("t1")[0]).toEqual({ kind: "tool.call", id: "a", turn: "t1", data: call("a").data });
  });

  it("closes a request on its answer, and gives it to one taker only", () => {
    const pending = new PendingRequests();
    pending.observe(call("a"));
    pending.observe(ask("a")); // the same id in another kind is another request
    expect(pending.has("tool.call", "a")).toBe(true);
    pending.observe({ type: "tool.result", turn: "t1", data: { id: "a", content: [], is_error: false } });
    expect(pending.has("tool.call", "a")).toBe(false);
    expect(pending.has("permission.requested", "a")).toBe(true);
    expect(pending.take("permission.requested", "a")?.id).toBe("a");
    expect(pending.take("permission.requested", "a")).toBeUndefined();
    expect(pending.list()).toEqual([]);
  });

  it("keeps a repeated request in the place of the first, with the later data", () => {
    const pending = new PendingRequests();
    pending.observe(call("a"));
    pending.observe(call("b"));
    pending.observe({ type: "tool.call", turn: "t1", data: { id: "a", name: "other", arguments: {} } });
    expect(pending.list().map((r) => [r.id, r.data.name])).toEqual([
      ["a", "other"],
      ["b", "echo"],
    ]);
  });

  it("ignores events that open or answer nothing, and requests without a string id", () => {
    const pending = new PendingRequests();
    pending.observe({ type: "assistant.delta", turn: "t1", data: { text: "id" } });
    pending.observe({ type: "tool.call", turn: "t1", data: { id: 7 } } as unknown as NewEvent);
    expect(pending.list()).toEqual([]);
  });
});
