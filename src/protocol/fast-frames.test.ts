// The fast decoder against the reference (decodeRunnerFrame, zod) on the same generated lines: valid frames
// in every spelling JSON allows, and each kind of breakage. Both must accept with equal values, or both refuse
// with the same error.
import { describe, expect, it } from "vitest";
import { type Rng, rng } from "../testing/rng.js";
import { decodeRunnerFrameFast, exactDelta, exactToolCall, fastFrame, verbatimText } from "./fast-frames.js";
import { decodeRunnerFrame } from "./frames.js";

const PIECES = [
  "a",
  "hello",
  " ",
  "é",
  "日本",
  "😀",
  "\u2028",
  '\\"',
  "\\\\",
  "\\/",
  "\\n",
  "\\t",
  "\\u0041",
  "\\ud83d\\ude00",
  "\\ud800",
  "x".repeat(40),
];
const BAD_PIECES = ["\\x", "\\u12", "\\u12G4", "\t", "\u0001", "\\", '"'];

/** The inside of a JSON string token (escapes already written out). */
function stringBody(r: Rng, allowEmpty = true): string {
  const n = allowEmpty ? r.int(4) : 1 + r.int(3);
  let out = "";
  for (let i = 0; i < n; i++) out += r.pick(PIECES);
  return out;
}

const WS = ["", "", "", " ", "  ", "\t", "\r", " \r\t "];
const ws = (r: Rng) => r.pick(WS);

/** An object from [key, valueJson] pairs, keys in a random order, random whitespace. */
function object(r: Rng, members: [string, string][]): string {
  const shuffled = [...members];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const parts = shuffled.map(([k, v]) => `${ws(r)}"${k}"${ws(r)}:${ws(r)}${v}${ws(r)}`);
  return `{${parts.join(",")}${parts.length === 0 ? ws(r) : ""}}`;
}

const str = (body: string) => `"${body}"`;
const WRONG_VALUES = ["1", "null", "true", "[]", "{}", '["a"]', '{"text":"x"}', '""', "1.5e3"];

function deltaMembers(r: Rng): [string, string][] {
  return [
    ["attachment", str(stringBody(r, false))],
    ["turn", str(stringBody(r, false))],
    ["event", str("assistant.delta")],
    ["data", object(r, [["text", str(stringBody(r))]])],
  ];
}

function toolCallMembers(r: Rng): [string, string][] {
  const args: [string, string][] = [];
  for (let i = r.int(3); i > 0; i--) {
    args.push([r.pick(["value", "path", "n", "nested", "__proto__", "a b"]), r.pick(["1", '"v"', "[1,{}]"])]);
  }
  const uniqueArgs = [...new Map(args).entries()];
  return [
    ["attachment", str(stringBody(r, false))],
    ["turn", str(stringBody(r, false))],
    ["id", str(stringBody(r, false))],
    ["method", str("tool.call")],
    [
      "params",
      object(r, [
        ["id", str(stringBody(r, false))],
        ["name", str(r.pick(["echo", "read_file", "é"]))],
        ["arguments", object(r, uniqueArgs)],
      ]),
    ],
  ];
}

/** One way to break (or, sometimes, merely respell) a frame's members. */
function mutate(r: Rng, members: [string, string][]): [string, string][] {
  const out = members.map(([k, v]) => [k, v] as [string, string]);
  const at = r.int(out.length);
  switch (r.int(10)) {
    case 0:
      out.splice(at, 1); // missing field
      break;
    case 1:
      out.push([r.pick(["extra", "Event", "__proto__", "attachment", "data"]), r.pick(WRONG_VALUES)]);
      break;
    case 2:
      out[at]![1] = r.pick(WRONG_VALUES); // wrong type
      break;
    case 3:
      out[at]![1] = str(r.pick(BAD_PIECES)); // not a valid string
      break;
    case 4:
      out[at]![1] = '""'; // empty id
      break;
    case 5:
      out[at]![0] = out[at]![0].replace(/^./, (c) => `\\u00${c.charCodeAt(0).toString(16)}`); // escaped key
      break;
    case 6:
      out.push(out[at]!); // duplicate key
      break;
    case 7: {
      const value = out[at]![1];
      if (value.startsWith("{"))
        out[at]![1] = value.replace(/}$/, ',"bold":true}'); // extra nested field
      else out[at]![1] = str(r.pick(["assistant.message", "tool.call", "assistant.shout", "x"]));
      break;
    }
    case 8:
      out[at]![1] = `${out[at]![1]}${r.pick(["", "]", ",", "}"])}`; // garbage after a value
      break;
    default:
      out[at]![1] = out[at]![1].replace(/^"/, '"\\u00'); // broken escape at the start of a value
  }
  return out;
}

function line(r: Rng, members: [string, string][]): string {
  const body = object(r, members);
  switch (r.int(12)) {
    case 0:
      return body.slice(0, r.int(body.length)); // cut short
    case 1:
      return `${body}${r.pick(["x", "}", " 1", "\r"])}`; // trailing bytes
    case 2:
      return ` ${body}\t`;
    default:
      return body;
  }
}

/** The fast path's own answer: a frame, or undefined when it leaves the line to the reference. */
function fast(input: string): unknown {
  try {
    return fastFrame(JSON.parse(input), input);
  } catch {
    return undefined;
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

function run(decode: (line: string) => unknown, input: string): Outcome {
  try {
    return { ok: true, value: decode(input) };
  } catch (err) {
    return { ok: false, error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

/** Generated lines; `plain` marks a frame written whole and unmutated, with no `__proto__` argument. */
function corpus(seed: number, count: number): { input: string; plain: boolean }[] {
  const r = rng(seed);
  const lines: { input: string; plain: boolean }[] = [];
  for (let i = 0; i < count; i++) {
    const members = r.next() < 0.5 ? deltaMembers(r) : toolCallMembers(r);
    const mutated = r.next() >= 0.4;
    const input = line(r, mutated ? mutate(r, members) : members);
    lines.push({ input, plain: !mutated && !input.includes("__proto__") });
  }
  return lines;
}

describe("fast runner frame decoding", () => {
  it("agrees with the zod reference on generated valid and invalid frames", () => {
    let accepted = 0;
    let plain = 0;
    for (const { input, plain: isPlain } of corpus(12, 5000)) {
      const want = run(decodeRunnerFrame, input);
      const got = run(decodeRunnerFrameFast, input);
      expect({ input, ...got }).toEqual({ input, ...want });
      if (want.ok) {
        accepted++;
        // Every frame spelled as a runner SDK would spell it takes the fast path.
        if (isPlain) {
          plain++;
          expect({ input, fast: fast(input) !== undefined }).toEqual({
            input,
            fast: true,
          });
        }
        // The value must serialise as the reference's does (no hidden field leaks into JSON).
        const value = got.ok ? got.value : undefined;
        expect(JSON.parse(JSON.stringify(value))).toEqual(JSON.parse(JSON.stringify(want.value)));
      }
    }
    // Not vacuous: many frames were valid, many of them plain.
    expect(accepted).toBeGreaterThan(1500);
    expect(plain).toBeGreaterThan(1000);
  });

  it("decodes deltas spelled as runners write them without JSON.parse, agreeing with the reference", () => {
    const r = rng(21);
    let exact = 0;
    // Shared by every line, as a runner's stream shares it: ids found again must still come out right.
    const seen = { attachment: "a", turn: "4f9c-x" };
    for (let i = 0; i < 5000; i++) {
      const value = (allowEmpty: boolean) =>
        r.next() < 0.85
          ? str(r.next() < 0.7 ? r.pick(["a", "4f9c-x", "é😀", "x".repeat(40)]) : stringBody(r, allowEmpty))
          : r.pick([...WRONG_VALUES, str(r.pick(BAD_PIECES))]);
      const members: [string, string][] = [
        ["attachment", value(false)],
        ["turn", value(false)],
        ["event", r.next() < 0.9 ? str("assistant.delta") : r.pick(['"assistant.message"', '"x"', "1"])],
        ["data", r.next() < 0.9 ? `{"text":${value(true)}}` : r.pick(['{"text":"x","b":1}', "{}", '"x"'])],
      ];
      let input = `{${members.map(([k, v]) => `"${k}":${v}`).join(",")}}`;
      const cut = r.int(8);
      if (cut === 0) input = input.slice(0, r.int(input.length));
      else if (cut === 1) input += r.pick(["x", "}", " ", '"}}']);
      const want = run(decodeRunnerFrame, input);
      expect({ input, ...run(decodeRunnerFrameFast, input) }).toEqual({ input, ...want });
      const got = exactDelta(input, r.next() < 0.5 ? seen : undefined);
      if (got) {
        exact++;
        expect({ input, got }).toEqual({ input, got: want.ok ? want.value : "refused" });
        expect(verbatimText((got as { data: unknown }).data)).toBe(
          (want as { value: { data: { text: string } } }).value.data.text,
        );
      } else if (
        want.ok &&
        (want.value as { event?: string }).event === "assistant.delta" &&
        !input.includes("\\") &&
        !input.includes('"data":{}') &&
        input === JSON.stringify(JSON.parse(input))
      ) {
        // Only a delta spelled otherwise (an escape, whitespace, no text, which the reference makes "") may leave
        // the exact path.
        throw new Error(`a plain delta left the exact path: ${input}`);
      }
    }
    expect(exact).toBeGreaterThan(800);
  });

  it("decodes tool calls spelled as runners write them by position, agreeing with the reference", () => {
    const r = rng(33);
    let exact = 0;
    const seen = { attachment: "a", turn: "4f9c-x" };
    for (let i = 0; i < 6000; i++) {
      const value = (allowEmpty: boolean) =>
        r.next() < 0.85
          ? str(
              r.next() < 0.7
                ? r.pick(["a", "4f9c-x", "é😀", "echo", "x".repeat(40)])
                : stringBody(r, allowEmpty),
            )
          : r.pick([...WRONG_VALUES, str(r.pick(BAD_PIECES)), '""']);
      const args =
        r.next() < 0.85
          ? r.pick([
              "{}",
              '{"value":"v"}',
              '{"value":"}}","n":[1,{"a":null}]}',
              '{"a":1,"a":2}',
              '{"__proto__":1}',
              '{"x":{"__proto__":{"y":1}}}',
              '{ "s" : "\\u0041" }',
              `{"t":${str(stringBody(r))}}`,
            ])
          : r.pick(["[]", "1", '"x"', "null", '{"a":}', "{", '{"a":1}}', '{"a":1},"b":2', " {}"]);
      const members: [string, string][] = [
        ["attachment", value(false)],
        ["turn", value(false)],
        ["id", value(false)],
        ["method", r.next() < 0.9 ? str("tool.call") : r.pick(['"tool.calls"', '"prompt"', "1"])],
        [
          "params",
          r.next() < 0.9
            ? `{"id":${value(false)},"name":${value(false)},"arguments":${args}}`
            : r.pick(['{"id":"c","name":"n"}', '{"id":"c","name":"n","arguments":{},"x":1}', "{}", '"p"']),
        ],
      ];
      if (r.next() < 0.05) members.push(["extra", "1"]);
      let input = `{${members.map(([k, v]) => `"${k}":${v}`).join(",")}}`;
      const cut = r.int(10);
      if (cut === 0) input = input.slice(0, r.int(input.length));
      else if (cut === 1) input += r.pick(["x", "}", " ", "}}", "\t"]);
      const want = run(decodeRunnerFrame, input);
      expect({ input, ...run(decodeRunnerFrameFast, input) }).toEqual({ input, ...want });
      const got = exactToolCall(input, r.next() < 0.5 ? seen : undefined);
      if (got) {
        exact++;
        expect({ input, got }).toEqual({ input, got: want.ok ? want.value : "refused" });
      } else if (
        want.ok &&
        (want.value as { method?: string }).method === "tool.call" &&
        !input.includes("\\") &&
        !input.includes("__proto__") &&
        !input.includes('"arguments":null') &&
        input.includes('"arguments":') &&
        input === JSON.stringify(JSON.parse(input))
      ) {
        // Only a call spelled otherwise (an escape, whitespace, a `__proto__` argument, null or no arguments, which
        // the reference makes `{}`) may leave the exact path.
        throw new Error(`a plain tool call left the exact path: ${input}`);
      }
    }
    expect(exact).toBeGreaterThan(300);
  });

  it("marks a delta's text verbatim exactly when the frame holds it unescaped", () => {
    const r = rng(7);
    let verbatim = 0;
    for (let i = 0; i < 2000; i++) {
      const body = stringBody(r);
      const spacing = r.pick(["", "", " "]);
      const input = `{"attachment":"a","turn":"t","event":"assistant.delta","data":{"text":${spacing}"${body}"}}`;
      const frame = decodeRunnerFrameFast(input) as { data: { text: string } };
      expect(frame).toEqual(decodeRunnerFrame(input));
      const text = verbatimText(frame.data);
      const expected = spacing === "" && !body.includes("\\") ? body : undefined;
      expect({ input, text }).toEqual({ input, text: expected });
      if (text !== undefined) {
        verbatim++;
        // Written verbatim, the text is the data's JSON: exactly what JSON.stringify gives.
        expect(JSON.stringify(frame.data)).toBe(`{"text":"${text}"}`);
        expect(Object.isFrozen(frame.data)).toBe(true);
      }
    }
    expect(verbatim).toBeGreaterThan(200);
  });

  it("finds no verbatim text when a later duplicate or trailing byte changes the ending", () => {
    const dup =
      '{"attachment":"a","turn":"t","event":"assistant.delta","data":{"text":"x"},"data":{"text":"y"}}';
    const frame = decodeRunnerFrameFast(dup) as { data: unknown };
    expect(frame.data).toEqual({ text: "y" });
    expect(verbatimText(frame.data)).toBe("y");
    const inner = '{"attachment":"a","turn":"t","event":"assistant.delta","data":{"text":"\\"x\\"}"}}';
    const tricky = decodeRunnerFrameFast(inner) as { data: { text: string } };
    expect(tricky.data.text).toBe('"x"}');
    expect(verbatimText(tricky.data)).toBeUndefined();
  });

  it("leaves frames other than deltas and tool calls to the reference", () => {
    const message =
      '{"attachment":"A","turn":"T","event":"assistant.message","data":{"text":"Hello!","usage":{"input":12,"output":4}}}';
    expect(fast(message)).toBeUndefined();
    expect(decodeRunnerFrameFast(message)).toEqual(decodeRunnerFrame(message));
    const reply = '{"attachment":"A","id":"1","result":[{"path":"a","size":1}]}';
    expect(decodeRunnerFrameFast(reply)).toEqual(decodeRunnerFrame(reply));
  });

  it("words a refusal exactly as the reference does", () => {
    const bad = '{"attachment":"A","turn":"T","event":"assistant.delta","data":{"text":"x"},"extra":1}';
    expect(() => decodeRunnerFrameFast(bad)).toThrow(/Unrecognized key.*extra/);
    expect(run(decodeRunnerFrameFast, bad)).toEqual(run(decodeRunnerFrame, bad));
  });
});
