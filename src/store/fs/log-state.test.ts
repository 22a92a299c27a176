import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { LogState, SAVE_EVERY, worthSaving } from "./log-state.js";

describe("worthSaving", () => {
  it("saves once the last anchor is SAVE_EVERY past the last save", () => {
    expect(worthSaving(SAVE_EVERY + 100, 0, SAVE_EVERY + 50)).toBe(true);
    expect(worthSaving(SAVE_EVERY + 100, 0, SAVE_EVERY - 1)).toBe(false);
    expect(worthSaving(3 * SAVE_EVERY, 2 * SAVE_EVERY, 3 * SAVE_EVERY - 10)).toBe(false);
  });

  it("waits for the next anchor while the last line is longer than the scan the save would spare", () => {
    // A turn's whole text as one line of 3 × SAVE_EVERY, starting just past the threshold.
    const start = SAVE_EVERY + 10;
    expect(worthSaving(start + 3 * SAVE_EVERY, 0, start)).toBe(false);
    // Its turn.settled, a short line of its own, follows.
    const settled = start + 3 * SAVE_EVERY;
    expect(worthSaving(settled + 200, 0, settled)).toBe(true);
  });
});

describe("LogState", () => {
  let seq = 0;
  const event = (type: string, id: string, turn = "t1"): SessionEvent =>
    ({ seq: ++seq, ts: "2026-01-01T00:00:00.000Z", session: "s", turn, type, data: { id } }) as SessionEvent;

  it("lists open requests in the order they were opened, across kinds; each kind's ids apart", () => {
    const state = new LogState();
    const call = event("tool.call", "1");
    const permission = event("permission.requested", "1");
    const question = event("question.requested", "q");
    const other = event("tool.call", "2");
    state.observe([call, permission, question, other]);
    expect(state.snapshot().requests).toEqual([call, permission, question, other]);
    // Answering the tool call "1" leaves the permission request "1" open.
    state.observe([event("tool.result", "1")]);
    expect(state.snapshot().requests).toEqual([permission, question, other]);
  });

  it("replaces a repeated id in its place, and lists one opened again after its answer last", () => {
    const state = new LogState();
    const [a, b, c] = [event("tool.call", "a"), event("question.requested", "b"), event("tool.call", "c")];
    state.observe([a, b, c]);
    const again = event("tool.call", "a");
    state.observe([again]);
    expect(state.snapshot().requests).toEqual([again, b, c]);
    const reopened = event("question.requested", "b");
    state.observe([event("question.answered", "b"), reopened]);
    expect(state.snapshot().requests).toEqual([again, c, reopened]);
  });

  it("keeps open turns, and ignores events that neither open nor answer a request", () => {
    const state = new LogState();
    state.observe([
      { ...event("turn.started", "x", "t1"), data: {} },
      { ...event("turn.started", "x", "t2"), data: {} },
      event("user.prompt", "p"),
      { ...event("turn.settled", "x", "t1"), data: { status: "completed" } },
    ] as SessionEvent[]);
    expect(state.snapshot()).toEqual({ requests: [], openTurns: ["t2"] });
  });

  it("gives what it was seeded with back, in order", () => {
    const requests = [event("question.requested", "q"), event("tool.call", "c")];
    expect(LogState.from({ requests, openTurns: ["t1"] }).snapshot()).toEqual({
      requests,
      openTurns: ["t1"],
    });
  });
});
