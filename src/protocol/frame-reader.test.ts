// The reader that takes runner deltas straight from stdout's bytes, against the reference on the same streams:
// LineSplitter + decodeRunnerFrame (zod) over the same bytes cut into random chunks. Both must give the same
// frames and the same errors, in the same order, whatever the cuts.
import { describe, expect, it } from "vitest";
import { type Rng, rng } from "../testing/rng.js";
import { heldBytes } from "./fast-frames.js";
import { RunnerFrameReader } from "./frame-reader.js";
import { decodeRunnerFrame, ProtocolError } from "./frames.js";
import { FramingError, LineSplitter, MAX_FRAME } from "./ndjson.js";

const b = (s: string) => Buffer.from(s);
/** Pieces of a text token's inside, as bytes: plain, multi-byte, escaped, and bytes no valid line may hold. */
const TEXT = [
  b("hello "),
  b("x".repeat(60)),
  b("é"),
  b("日本"),
  b("😀"),
  b("\u2028"),
  b("\\n"),
  b('\\"'),
  b("\\u00e9"),
  b("\t"),
  b("\u0001"),
  Buffer.from([0xff]),
  Buffer.from([0xc3]),
  Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate: not UTF-8
  Buffer.from([0xef, 0xbf, 0xbd]), // U+FFFD itself
  b('"'),
  b("\\"),
];
const IDS = [
  ["a1", "t1"],
  ["a1", "t2"],
  ["a2", "t1"],
  ["é", "日"],
  ["a\\u0031", "t1"], // an escaped id: the bytes differ from what it decodes to
];

function text(r: Rng): Buffer {
  const parts: Buffer[] = [];
  for (let n = r.int(5); n > 0; n--) parts.push(r.next() < 0.7 ? TEXT[r.int(2)]! : r.pick(TEXT));
  return Buffer.concat(parts);
}

/** One line, newline included. */
function line(r: Rng): Buffer {
  const [attachment, turn] = r.next() < 0.8 ? IDS[0]! : r.pick(IDS);
  const delta = (t: Buffer) =>
    Buffer.concat([
      b(`{"attachment":"${attachment}","turn":"${turn}","event":"assistant.delta","data":{"text":"`),
      t,
      b('"}}'),
    ]);
  const k = r.int(20);
  let body: Buffer;
  if (k < 12) body = delta(text(r));
  else if (k === 12)
    body = delta(text(r)).subarray(0, r.int(90)); // cut short
  else if (k === 13) body = Buffer.concat([delta(text(r)), b(r.pick([" ", "}", '"', ","]))]);
  else if (k === 14)
    body = b(
      `{ "attachment":"${attachment}","turn":"${turn}","event":"assistant.delta","data":{"text":"x"}}`,
    );
  else if (k === 15)
    body = b(
      `{"attachment":"${attachment}","turn":"${turn}","event":"assistant.delta","data":{"text":"x","y":1}}`,
    );
  else if (k === 16) body = b(`{"attachment":"${attachment}","id":"1","result":null}`);
  else if (k === 17)
    body = b(
      `{"attachment":"${attachment}","turn":"${turn}","id":"c1","method":"tool.call","params":{"id":"x","name":"echo","arguments":{}}}`,
    );
  else if (k === 18) body = b("");
  else body = b(`{"attachment":"","turn":"${turn}","event":"assistant.delta","data":{"text":"x"}}`);
  return Buffer.concat([body, b("\n")]);
}

/** `bytes` cut at random places (some cuts right before or after a newline, or none at all). */
function chunks(r: Rng, bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const size = r.next() < 0.2 ? 1 + r.int(8) : 1 + r.int(600);
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

type Outcome = { frame: unknown } | { error: string };

/** A frame as plain JSON values, whatever objects carry its data. */
const plain = (frame: unknown): Outcome => ({ frame: JSON.parse(JSON.stringify(frame)) });

function reference(parts: Buffer[]): Outcome[] {
  const out: Outcome[] = [];
  const splitter = new LineSplitter((l) => {
    try {
      out.push(plain(decodeRunnerFrame(l)));
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
      out.push({ error: err.message });
    }
  });
  for (const p of parts) splitter.push(p);
  splitter.end();
  return out;
}

function subject(parts: Buffer[]): { outcomes: Outcome[]; fromBytes: number } {
  const out: Outcome[] = [];
  let fromBytes = 0;
  const reader: RunnerFrameReader = new RunnerFrameReader(
    (l) => {
      try {
        out.push(plain(reader.decode(l)));
      } catch (err) {
        if (!(err instanceof ProtocolError)) throw err;
        out.push({ error: err.message });
      }
    },
    (attachment, turn, data) => {
      const frame = { attachment, turn, event: "assistant.delta", data };
      const held = heldBytes(data);
      if (held) {
        fromBytes++;
        // What the log will write is the text's own UTF-8, byte for byte.
        const bytes = Buffer.alloc(held.byteLength);
        held.copyTo(bytes, 0);
        expect(bytes).toEqual(Buffer.from(data.text));
      }
      out.push(plain(frame));
    },
  );
  for (const p of parts) reader.push(p);
  reader.end();
  return { outcomes: out, fromBytes };
}

describe("RunnerFrameReader", () => {
  it("gives the reference's frames and errors on generated streams cut anywhere", () => {
    let fromBytes = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      const lines: Buffer[] = [];
      for (let n = 5 + r.int(40); n > 0; n--) lines.push(line(r));
      const parts = chunks(r, Buffer.concat(lines));
      const got = subject(parts);
      expect(got.outcomes, `seed ${seed}`).toEqual(reference(parts));
      fromBytes += got.fromBytes;
    }
    expect(fromBytes).toBeGreaterThan(1000); // the byte path really ran
  });

  it("reads a repeated delta from the bytes once its ids are known, and its text only on demand", () => {
    const frames: unknown[] = [];
    const reader: RunnerFrameReader = new RunnerFrameReader(
      (l) => frames.push(reader.decode(l)),
      (attachment, turn, data) => frames.push({ attachment, turn, event: "assistant.delta", data }),
    );
    const d = (t: string) =>
      `{"attachment":"a","turn":"t","event":"assistant.delta","data":{"text":"${t}"}}\n`;
    reader.push(Buffer.from(d("one") + d("twö") + d("three")));
    const data = frames.map((f) => (f as { data: unknown }).data);
    expect(data.map((x) => heldBytes(x) !== undefined)).toEqual([false, true, true]);
    expect(data.map((x) => (x as { text: string }).text)).toEqual(["one", "twö", "three"]);
    expect(JSON.stringify(data[1])).toBe('{"text":"twö"}');
    // A spread (as a redacting log makes) carries the text it sets, never the chunk behind it.
    expect({ ...(data[2] as object), text: "x" }).toEqual({ text: "x" });
    expect(heldBytes(data[1])!.byteLength).toBe(4);
  });

  it("reads the deltas of a shared runner's attachments from the bytes, interleaved, once each one's ids are known", () => {
    const frames: { attachment: string; turn: string; via: string }[] = [];
    const reader: RunnerFrameReader = new RunnerFrameReader(
      (l) => frames.push({ ...(reader.decode(l) as { attachment: string; turn: string }), via: "line" }),
      (attachment, turn) => frames.push({ attachment, turn, via: "bytes" }),
    );
    const d = (a: string, t: string) =>
      `{"attachment":"${a}","turn":"${t}","event":"assistant.delta","data":{"text":"x"}}\n`;
    const round = (t: string) => ["a", "b", "é"].map((a) => d(a, t)).join("");
    reader.push(
      Buffer.from(round("t1") + round("t1") + round("t1") + d("b", "t2") + d("b", "t2") + d("a", "t1")),
    );
    const seen = frames.map((f) => `${f.attachment}/${f.turn} ${f.via}`);
    expect(seen).toEqual([
      ...["a/t1 line", "b/t1 line", "é/t1 line"],
      ...["a/t1 bytes", "b/t1 bytes", "é/t1 bytes"],
      ...["a/t1 bytes", "b/t1 bytes", "é/t1 bytes"],
      ...["b/t2 line", "b/t2 bytes", "a/t1 bytes"],
    ]);
  });

  it("refuses a line over the cap as LineSplitter does, even when it starts like a known delta", () => {
    const lines: string[] = [];
    const reader: RunnerFrameReader = new RunnerFrameReader(
      (l) => lines.push(l),
      () => lines.push("(delta)"),
    );
    const head = '{"attachment":"a","turn":"t","event":"assistant.delta","data":{"text":"';
    reader.push(Buffer.from(`${head}x"}}\n`));
    reader.decode(lines[0]!);
    const huge = Buffer.from(`${head}${"y".repeat(MAX_FRAME)}"}}\n`);
    expect(() => reader.push(huge)).toThrow(FramingError);
    expect(lines).toHaveLength(1);
  });
});
