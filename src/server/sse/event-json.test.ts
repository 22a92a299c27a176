import { describe, expect, it, vi } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { eventJson } from "./event-json.js";

const delta = (text: string, extra: Partial<Record<string, unknown>> = {}) =>
  ({
    seq: 7,
    ts: "2026-12-03T16:40:00.123Z",
    session: "s_abc",
    turn: "t_1",
    type: "assistant.delta",
    data: { text },
    ...extra,
  }) as unknown as SessionEvent;

// JSON.stringify is the reference: every case must give its exact text, by hand or by falling back to it.
const texts = [
  "",
  "plain text of a delta",
  'a "quote"',
  "back\\slash",
  "new\nline",
  "tab\t and \u0000 nul and \u001f",
  "\u007f del",
  "emoji 😀 pair",
  "lone \ud800 high",
  "lone \udfff low",
  "line sep \u2028 para \u2029",
  "</script><b>",
  "ü ß 中文",
];

describe("eventJson", () => {
  it.each(texts)("writes a delta exactly as JSON.stringify: %j", (text) => {
    for (const e of [
      delta(text),
      delta(text, { turn: undefined }),
      delta("x", { session: text }),
      delta("x", { turn: text }),
    ]) {
      expect(eventJson(e)).toBe(JSON.stringify(e));
    }
  });

  it("writes a plain delta by hand, not through JSON.stringify", () => {
    const e = delta("plain");
    const expected = JSON.stringify(e);
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      expect(eventJson(e)).toBe(expected);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });

  it("writes a delta without a turn without one", () => {
    const { turn: _, ...noTurn } = delta("hi") as unknown as Record<string, unknown>;
    const e = noTurn as unknown as SessionEvent;
    expect(eventJson(e)).toBe(JSON.stringify(e));
    expect(JSON.parse(eventJson(e))).toEqual(noTurn);
  });

  it("gives every other shape to JSON.stringify, with the same text", () => {
    const cases: unknown[] = [
      delta("x", { data: { text: "x", extra: 1 } }),
      delta("x", { data: { text: 5 } }),
      delta("x", { data: {} }),
      delta("x", { data: null }),
      delta("x", { data: "text" }),
      delta("x", { data: ["x"] }),
      delta("x", { seq: 1.5 }),
      delta("x", { seq: -0 }),
      delta("x", { extra: true }),
      delta("x", { ts: 'quo"te' }),
      { type: "assistant.delta", seq: 1, ts: "t", session: "s", data: { text: "reordered" } },
      { seq: 1, ts: "t", session: "s", type: "tool.call", data: { id: "c", name: "n" } },
      delta("x", { data: Object.assign(Object.create({ inherited: 1 }), { text: "proto" }) }),
      delta("x", {
        data: new (class {
          text = "class";
          toJSON() {
            return { text: "from toJSON" };
          }
        })(),
      }),
    ];
    for (const e of cases) expect(eventJson(e as SessionEvent)).toBe(JSON.stringify(e));
  });
});
