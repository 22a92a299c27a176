// The runner side's zod-free checks against the zod schemas (the reference) on the same inputs: every frame
// Brain sends, each result the SDK sends back and assistant.message data, valid and broken at every field in
// every way (missing, wrong type, empty, unknown field, `__proto__`). A fast check may pass a value only when
// the reference does, to the same value; the valid ones it must pass, or it saves nothing.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeBrainFrameFast, isRequestResult, messageDataProblem } from "./fast-brain-frames.js";
import { decodeBrainFrame } from "./frames.js";
import { MessageData, RequestResults, type RunnerMethod } from "./runner.js";

const WRONG: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  2 ** 53,
  "",
  "x",
  "text",
  "native",
  true,
  [],
  ["a"],
  [{}],
  {},
  { text: "x" },
];

type Path = (string | number)[];

function setAt(root: unknown, path: Path, value: unknown, remove = false): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (remove) delete at[last];
  else at[last] = value;
  return copy;
}

/** Every path to a value inside `v` (the root excluded). */
function paths(v: unknown, at: Path = []): Path[] {
  if (v === null || typeof v !== "object") return [];
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
  return entries.flatMap(([k, x]) => [[...at, k], ...paths(x, [...at, k])]);
}

/** The objects inside `v`, root included, by path. */
function objectPaths(v: unknown, at: Path = []): Path[] {
  if (v === null || typeof v !== "object") return [];
  const inner = (Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v)).flatMap(([k, x]) =>
    objectPaths(x, [...at, k]),
  );
  return Array.isArray(v) ? inner : [at, ...inner];
}

/** `base` broken in every way at every place (plus base itself first). */
function variants(base: unknown): unknown[] {
  const out: unknown[] = [base];
  for (const path of paths(base)) {
    out.push(setAt(base, path, undefined, true));
    for (const wrong of WRONG) out.push(setAt(base, path, wrong));
  }
  for (const path of objectPaths(base)) {
    const extra = path.length ? setAt(base, [...path, "extra"], 1) : { ...(base as object), extra: 1 };
    out.push(extra);
  }
  return out;
}

/** The JSON of `value` with a `"__proto__"` member added to each object in turn (JSON.stringify cannot). */
function protoLines(value: unknown): string[] {
  const json = JSON.stringify(value);
  const lines: string[] = [];
  for (let i = json.indexOf("{"); i !== -1; i = json.indexOf("{", i + 1)) {
    const empty = json[i + 1] === "}";
    lines.push(`${json.slice(0, i + 1)}"__proto__":{"x":1}${empty ? "" : ","}${json.slice(i + 1)}`);
  }
  return lines;
}

const OPEN = {
  attachment: "A1",
  id: "o1",
  method: "open",
  params: {
    session_id: "s1",
    dir: join(tmpdir(), "s1"),
    config: {
      model: "m",
      system_prompt: "be brief",
      tools: ["echo"],
      tool_mode: "bound",
      options: { delay_ms: 5, nested: { a: [1] } },
    },
    tools: [
      { name: "echo", description: "echoes", input_schema: { type: "object" } },
      { name: "t2", input_schema: {} },
    ],
    provider: { api_key: "k", base_url: "http://127.0.0.1:1", api: "openai" },
  },
};
const FRAMES = [
  OPEN,
  {
    attachment: "A1",
    id: "o2",
    method: "open",
    params: { session_id: "s", dir: "d", config: {}, tools: [], provider: {} },
  },
  { attachment: "A1", turn: "T1", id: "p1", method: "prompt", params: { text: "hello" } },
  { attachment: "A1", turn: "T1", id: "s1", method: "steer", params: { text: "" } },
  { attachment: "A1", turn: "T1", id: "i1", method: "interrupt", params: null },
  { attachment: "A1", id: "c1", method: "checkpoint", params: null },
  { attachment: "A1", id: "d1", method: "detach", params: null },
  {
    attachment: "A1",
    turn: "T1",
    id: "t1",
    result: { content: [{ type: "text", text: "ok" }], is_error: false },
  },
  { attachment: "A1", turn: "T1", id: "t2", result: { content: [], is_error: true } },
];

/** Both decoders on one line: the fast one passes only what the reference passes, to the same frame. */
function compare(line: string): { fast: unknown; valid: boolean } {
  let reference: unknown;
  let valid = true;
  try {
    reference = decodeBrainFrame(line);
  } catch {
    valid = false;
  }
  const fast = decodeBrainFrameFast(line);
  if (!valid) expect(fast, line).toBeUndefined();
  else if (fast !== undefined) expect(fast, line).toEqual(reference);
  return { fast, valid };
}

describe("decodeBrainFrameFast against decodeBrainFrame", () => {
  it("passes every valid frame, as the reference decodes it", () => {
    for (const frame of FRAMES) {
      const { fast, valid } = compare(JSON.stringify(frame));
      expect(valid).toBe(true);
      expect(fast).toEqual(frame);
    }
  });

  it("passes nothing the reference refuses: each field missing, of each wrong type, or unknown", () => {
    let refused = 0;
    for (const frame of FRAMES) {
      for (const variant of variants(frame)) {
        const line = JSON.stringify(variant);
        if (line !== undefined && !compare(line).valid) refused += 1;
      }
      for (const line of protoLines(frame)) compare(line);
    }
    expect(refused).toBeGreaterThan(500);
  });

  it("passes nothing that is not a JSON object, nor a frame with another method", () => {
    for (const line of [
      "",
      "nul",
      "null",
      "[]",
      '"x"',
      "1",
      "{}",
      '{"method":"tool.call"}',
      "{",
      '{"a":1}x',
    ]) {
      expect(compare(line).valid).toBe(false);
    }
    const other = JSON.stringify({ ...FRAMES[2], method: "Prompt" });
    expect(compare(other).valid).toBe(false);
  });
});

const RESULTS: [RunnerMethod, unknown][] = [
  ["open", {}],
  ["open", { tools: ["echo"], nested: { a: 1 } }],
  ["prompt", {}],
  ["prompt", { interrupted: true }],
  ["steer", {}],
  ["interrupt", {}],
  ["detach", {}],
  ["checkpoint", []],
  [
    "checkpoint",
    [
      { path: "a.jsonl", size: 10, append_only: true },
      { path: "b", size: 0 },
    ],
  ],
];

describe("isRequestResult against RequestResults", () => {
  it("passes the valid results, and nothing the schema refuses", () => {
    for (const [method, base] of RESULTS) {
      expect(isRequestResult(method, base), `${method} ${JSON.stringify(base)}`).toBe(true);
      const odd = [Object.create(null), new (class Meta {})(), { [Symbol("s")]: 1 }];
      for (const variant of [...variants(base), ...odd, ...WRONG]) {
        if (isRequestResult(method, variant)) {
          expect(
            RequestResults[method].safeParse(variant).success,
            `${method} ${JSON.stringify(variant)}`,
          ).toBe(true);
        }
      }
    }
  });
});

describe("null results", () => {
  it("are the empty result of every method, as the seed's Go host decodes a nil map or slice", () => {
    for (const method of Object.keys(RequestResults) as RunnerMethod[]) {
      expect(isRequestResult(method, null), method).toBe(true);
      const parsed = RequestResults[method].safeParse(null);
      expect(parsed.data, method).toEqual(method === "checkpoint" ? [] : {});
    }
    expect(RequestResults.checkpoint.safeParse("x").error?.issues[0]?.message).toMatch(/expected array/);
  });
});

describe("messageDataProblem against MessageData", () => {
  const BASES = [
    { text: "hi" },
    {
      text: "",
      stop_reason: "stop",
      usage: { input: 1, output: 2, cache_read: 0, cache_write: 3, cost: 0.5 },
    },
    { text: "x", usage: { input: 0, output: 0 }, stop_reason: undefined },
  ];

  it("agrees with the schema on every variant of plain data, naming the field it refuses", () => {
    for (const base of BASES) {
      for (const variant of [...variants(base), ...WRONG]) {
        const problem = messageDataProblem(variant);
        const label = JSON.stringify(variant) ?? String(variant);
        expect(problem === undefined, `${label}: ${problem}`).toBe(MessageData.safeParse(variant).success);
      }
    }
    expect(messageDataProblem({ text: "x", usage: { input: -1, output: 0 } })).toBe(
      "usage.input: must be a whole number ≥ 0",
    );
    expect(messageDataProblem({ text: "x", extra: 1 })).toMatch(/unknown field "extra"/);
  });
});
