// Text events taken straight from the host's bytes, against the generic decode on the same streams: a peer with
// a text sink must hand on the very notifications (and warnings) a peer without one does, in the same order,
// whatever the chunks.
import { describe, expect, it } from "vitest";
import { TextBytes } from "../../protocol/text-bytes.js";
import { rng } from "../../testing/rng.js";
import { WarningLimit } from "../warning-limit.js";
import { hostPeer, MAX_QUEUED_FOR_REPLIES, type TextSink } from "./rpc-peer.js";

const b = (s: string) => Buffer.from(s);
const CONTENT = [
  b("hello "),
  b("x".repeat(50)),
  b("é日😀"),
  b("\u2028"),
  b("\\n"),
  b('\\"'),
  b("\\u0041"),
  b("\t"),
  Buffer.from([0xff]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xef, 0xbf, 0xbd]),
  b('"'),
  b('"}}'),
  b("\n"),
  b("\u007f~ "),
  b("\u001f"),
  b("\u00ff\u0100"),
];
const RUN = "run-1";

function line(r: ReturnType<typeof rng>): Buffer {
  const run = r.next() < 0.85 ? RUN : r.pick(["run-2", "", "run-\\u0031"]);
  const parts: Buffer[] = [];
  for (let n = r.int(4); n > 0; n--) parts.push(r.next() < 0.75 ? CONTENT[r.int(4)]! : r.pick(CONTENT));
  let text = Buffer.concat([
    b(`{"jsonrpc":"2.0","method":"harness.event","params":{"runId":"${run}","type":"text","content":"`),
    ...parts,
    b('"}}'),
  ]);
  const k = r.int(14);
  if (k === 0) text = text.subarray(0, r.int(text.length));
  else if (k === 1) text = Buffer.concat([text, b(r.pick([" ", "}", '"']))]);
  else if (k === 2) text = b(text.toString("latin1").replace('"type":"text"', '"type":"done"'));
  else if (k === 3)
    text = b(
      `{"jsonrpc":"2.0","method":"harness.event","params":{"runId":"${run}","type":"text", "content":"x"}}`,
    );
  else if (k === 4) text = b(`{"jsonrpc":"2.0","id":1,"result":{}}`);
  else if (k === 5) text = b("");
  return Buffer.concat([text, b("\n")]);
}

type Seen = [string, unknown];

let fromBytes = 0;

function feed(parts: Buffer[], withSink: boolean): Seen[] {
  const seen: Seen[] = [];
  // The run's own accumulator decides what is plain, as RunTranslator's does.
  const acc = new TextBytes();
  const sink: TextSink = {
    runId: RUN,
    plainText: (buf, start, end, view) => {
      const data = acc.addPlain(buf, start, end, view);
      if (!data) return false;
      fromBytes++;
      const content = data.text;
      // The bytes are the content's own UTF-8 (what the log will copy), byte for byte.
      expect(buf.subarray(start, end)).toEqual(Buffer.from(content));
      seen.push(["harness.event", { runId: RUN, type: "text", content }]);
      return true;
    },
  };
  const peer = hostPeer(() => {}, {
    onNotification: (method, params) => seen.push([method, params]),
    onWarning: (message) => seen.push(["warning", message]),
    ...(withSink ? { textSink: () => sink } : {}),
  });
  for (const p of parts) peer.feed(p);
  return seen;
}

describe("hostPeer's text events from the bytes", () => {
  it("hands on what the generic decode does, on generated streams cut anywhere", () => {
    fromBytes = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const lines: Buffer[] = [];
      for (let n = 5 + r.int(30); n > 0; n--) lines.push(line(r));
      const all = Buffer.concat(lines);
      const parts: Buffer[] = [];
      for (let at = 0; at < all.length; ) {
        const size = r.next() < 0.2 ? 1 + r.int(8) : 1 + r.int(500);
        parts.push(all.subarray(at, at + size));
        at += size;
      }
      const withSink = feed(parts, true);
      expect(withSink, `seed ${seed}`).toEqual(feed(parts, false));
    }
    expect(fromBytes).toBeGreaterThan(1000);
  });
});

describe("a host that floods Brain", () => {
  const quiet = { onNotification: () => {} };

  it("quotes no more than 200 characters of a method name, and stops replying to a host that does not read", () => {
    // The host reads nothing: all that is written to it stays queued.
    const replies: string[] = [];
    let queued = 0;
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const peer = hostPeer(
      (text) => {
        replies.push(text);
        queued += Buffer.byteLength(text);
      },
      { ...quiet, onWarning: warn },
      () => queued,
    );
    const method = `m${"x".repeat(5000)}`;
    const count = 5000;
    for (let id = 1; id <= count; id++) peer.feed(`{"jsonrpc":"2.0","id":${id},"method":"${method}"}\n`);
    const first = JSON.parse(replies[0]!) as { id: number; error: { code: number; message: string } };
    expect(first).toMatchObject({ id: 1, error: { code: -32601 } });
    expect(first.error.message).toBe(`Brain does not serve method "${method.slice(0, 200)}…"`);
    expect(warnings).toHaveLength(count); // the harness's WarningLimit holds them back (below)
    expect(warnings[0]).toBe(`extension host called "${method.slice(0, 200)}…", which Brain does not serve`);
    expect(replies.length).toBeLessThan(count);
    expect(queued).toBeLessThan(MAX_QUEUED_FOR_REPLIES + replies[0]!.length);
  });

  it("logs the first 20 different warnings of a run, and how many more it held back", () => {
    const logged: string[] = [];
    const limit = new WarningLimit((message) => logged.push(message));
    const peer = hostPeer(() => {}, { ...quiet, onWarning: (message) => limit.warn(message) });
    for (let n = 0; n < 5000; n++) peer.feed(`stray line ${n}\n`);
    for (let n = 0; n < 100; n++) peer.feed(`{"jsonrpc":"2.0","id":999,"result":{}}\n`);
    limit.flush("ext:x/y");
    expect(logged).toHaveLength(21);
    expect(logged[0]).toMatch(
      /^extension host wrote a line that is not JSON-RPC \(not JSON .*\): stray line 0$/,
    );
    expect(logged[20]).toBe("ext:x/y: 5080 more warnings like the ones above, not logged");
    // A new run starts afresh; a repeat is logged once.
    logged.length = 0;
    for (let n = 0; n < 3; n++) peer.feed(`{"jsonrpc":"2.0","id":7,"result":{}}\n`);
    limit.flush("ext:x/y");
    expect(logged).toEqual([
      "answer for unknown request id 7 ignored",
      "ext:x/y: 2 more warnings like the ones above, not logged",
    ]);
  });
});
