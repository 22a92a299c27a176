import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { decodeRunnerFrameFast, heldMessage, verbatimBytes } from "../../protocol/fast-frames.js";
import { TextBytes } from "../../protocol/text-bytes.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { statePath } from "./log-state.js";

let dir: string;
let file: string;
const opened: JsonlEventLog[] = [];

async function open(idleMs?: number): Promise<JsonlEventLog> {
  const log = await JsonlEventLog.open(file, "s1", undefined, idleMs === undefined ? {} : { idleMs });
  opened.push(log);
  return log;
}

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-format-"));
  file = path.join(dir, "events.jsonl");
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((l) => l.close()));
  await fs.rm(dir, { recursive: true, force: true });
});

const delta = (text: string, turn = "t1"): NewEvent => ({ type: "assistant.delta", turn, data: { text } });

/** A delta as the runner relay makes it: text taken verbatim from the frame. */
function frameDelta(text: string, turn = "t1"): NewEvent {
  const frame = decodeRunnerFrameFast(
    `{"attachment":"a","turn":${JSON.stringify(turn)},"event":"assistant.delta","data":{"text":"${text}"}}`,
  );
  if (!("event" in frame)) throw new Error("not decoded");
  return { type: frame.event, turn: frame.turn, data: frame.data } as NewEvent;
}

/** A delta as the runner relay reads one from stdout's bytes: its text a range of the chunk, never a string. */
function bytesDelta(text: string, turn = "t1"): NewEvent {
  const chunk = Buffer.from(`..${text}..`);
  return { type: "assistant.delta", turn, data: verbatimBytes(chunk, 2, chunk.length - 2) };
}

/** A delta as an extension host's run gathers one (TextBytes): its text a range of the turn's own blocks. */
function stableDelta(acc: TextBytes, text: string, turn = "t1"): NewEvent {
  const bytes = Buffer.from(text);
  return { type: "assistant.delta", turn, data: acc.addBytes(bytes, 0, bytes.length) };
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `${"w".repeat(1 + (i % 19))} `);

describe("compact lines", () => {
  it("stores a stream of small deltas, one per commit, at under 3 bytes per character", async () => {
    const log = await open();
    await log.append([{ type: "turn.started", turn: "t1", data: {} }]);
    const before = (await fs.stat(file)).size;
    let chars = 0;
    for (const w of words(2000)) {
      await log.append([frameDelta(w)]);
      chars += w.length;
    }
    const bytes = (await fs.stat(file)).size - before;
    expect(bytes / chars).toBeLessThan(3);
    const all = await log.read(0);
    expect(all.slice(1).map((e) => (e.data as { text: string }).text)).toEqual(words(2000));
  });

  it("gives back the very events it was given, live and after reopening, whatever the text", async () => {
    const log = await open();
    const written: SessionEvent[] = [];
    written.push(...(await log.append([frameDelta("a"), frameDelta("\\u00e9\\t"), delta('q"uote\n')])));
    written.push(...(await log.append([delta("ü 😀\u2028"), delta("other", "t2"), delta("again", "t2")])));
    written.push(...(await log.append([{ type: "assistant.delta", data: { text: "no turn" } }])));
    written.push(
      ...(await log.append([{ type: "turn.settled", turn: "t2", data: { status: "completed" } }])),
    );
    written.push(...(await log.append([delta("after an event")])));
    expect(await log.read(0)).toEqual(written);
    await log.close();
    const again = await open();
    expect(await again.read(0)).toEqual(written);
    expect(await readEventsFile(file)).toEqual(written);
    expect(written[1]?.data).toEqual({ text: "é\t" });
  });

  it("keeps every mix of held, escaped and whole events of two turns in order, in one commit or many", async () => {
    const log = await open();
    const pieces = ["plain", "", 'q"', "é", "😀", "tab\t", "x".repeat(300)];
    const written: SessionEvent[] = [];
    const texts = new Map<number, string>();
    const acc = new TextBytes();
    let n = 0;
    for (let round = 0; round < 6; round++) {
      const calls: Promise<SessionEvent[]>[] = [];
      for (let i = 0; i < 40; i++) {
        n++;
        const turn = n % 7 < 4 ? "t1" : "t2";
        const text = `${pieces[n % pieces.length]}${n}`;
        const e: NewEvent =
          n % 11 === 0
            ? { type: "turn.started", turn, data: {} }
            : n % 3 === 0
              ? frameDelta(text.replace(/[^\w é😀]/gu, ""), turn)
              : n % 3 === 1 && n % 2 === 0
                ? bytesDelta(text.replace(/[^\w é😀]/gu, ""), turn)
                : n % 3 === 2 && n % 4 < 2
                  ? stableDelta(acc, text.replace(/[^\w é😀]/gu, ""), turn)
                  : delta(text, turn);
        if (e.type === "assistant.delta") texts.set(n, e.data.text);
        calls.push(log.append(n % 5 === 0 ? [e, delta(`and ${n}`, turn)] : [e]));
      }
      for (const events of await Promise.all(calls)) written.push(...events);
    }
    expect(written.map((e) => e.seq)).toEqual(written.map((_, i) => i + 1));
    // Each call's first event: its text as given, however it was held.
    const firsts = written.filter(
      (e) => e.type === "assistant.delta" && !(e.data as { text: string }).text.startsWith("and "),
    );
    expect(firsts.map((e) => (e.data as { text: string }).text)).toEqual([...texts.values()]);
    expect(await log.read(0)).toEqual(written);
    await log.close();
    expect(await readEventsFile(file)).toEqual(written);
  });

  it("writes a turn's whole text from its bytes, and gives it back as it was gathered", async () => {
    const log = await open();
    const plain = new TextBytes();
    const escaped = new TextBytes();
    const pieces = ["héllo ", "x".repeat(70_000), " 😀 ", "end"];
    for (const p of pieces) plain.add(p);
    for (const p of [...pieces, 'q"uote\n']) escaped.add(p);
    const messages = [plain.message("end_turn"), escaped.message('odd "reason"')];
    expect(messages.map((m) => heldMessage(m) !== undefined)).toEqual([true, false]);
    // Each after deltas of its turn, in one commit: the message is a line of its own, not one more delta.
    const written = await log.append([
      frameDelta("a"),
      bytesDelta("b"),
      { type: "assistant.message", turn: "t1", data: messages[0]! },
      delta("c"),
      { type: "assistant.message", turn: "t1", data: messages[1]! },
    ]);
    expect(written.map((e) => e.data)).toEqual([
      { text: "a" },
      { text: "b" },
      { text: pieces.join(""), stop_reason: "end_turn" },
      { text: "c" },
      { text: `${pieces.join("")}q"uote\n`, stop_reason: 'odd "reason"' },
    ]);
    expect(await log.read(0)).toEqual(written);
    await log.close();
    expect(await readEventsFile(file)).toEqual(written);
  });

  it("keeps its anchors right around a message written from its blocks, live and after reopening", async () => {
    const log = await open();
    const acc = new TextBytes();
    const pieces = Array.from({ length: 3000 }, (_, i) => `piece ${i} ${"y".repeat(i % 50)} `);
    const written: SessionEvent[] = [];
    written.push(...(await log.append(pieces.slice(0, 1500).map((p) => stableDelta(acc, p)))));
    const rest = pieces.slice(1500).map((p) => stableDelta(acc, p));
    const message: NewEvent = { type: "assistant.message", turn: "t1", data: acc.message("end_turn") };
    written.push(...(await log.append([...rest, message, delta("after"), delta("more", "t2")])));
    written.push(...(await log.append([delta("and more", "t2")])));
    const text = (written[3000]!.data as { text?: string }).text;
    expect(text === pieces.join("")).toBe(true);
    for (const after of [0, 1499, 2999, 3000, 3001, 3002])
      expect(await log.read(after)).toEqual(written.slice(after));
    await log.close();
    const again = await open();
    for (const after of [0, 2999, 3000, 3002]) expect(await again.read(after)).toEqual(written.slice(after));
    expect(await again.append([delta("last", "t2")])).toMatchObject([{ seq: written.length + 1 }]);
  });

  it("reads a file in the older format, and keeps appending to it", async () => {
    const ts = "2025-06-01T00:00:00.000Z";
    const old = [
      { seq: 1, ts, session: "s1", turn: "t1", type: "turn.started", data: {} },
      { seq: 2, ts, session: "s1", turn: "t1", type: "assistant.delta", data: { text: "hel" } },
      { seq: 3, ts, session: "s1", turn: "t1", type: "assistant.delta", data: { text: "lo" } },
      { seq: 4, ts, session: "s1", turn: "t1", type: "permission.requested", data: { id: "p1", tool: "x" } },
    ];
    await fs.writeFile(file, old.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const log = await open();
    expect(log.lastSeq).toBe(4);
    expect(await log.read(0)).toEqual(old);
    expect(log.openState()).toEqual({ requests: [old[3]], openTurns: ["t1"] });
    const more = await log.append([delta("!"), delta("?")]);
    expect(more.map((e) => e.seq)).toEqual([5, 6]);
    expect(await log.read(2, 3)).toEqual([old[2], old[3], more[0]]);
    await log.close();
    expect(await readEventsFile(file)).toEqual([...old, ...more]);
  });
});

describe("reading after a cursor", () => {
  it("finds any cursor in a long log, from the live log and from the file", async () => {
    const log = await open();
    const all: SessionEvent[] = [];
    for (let i = 0; i < 1000; i++) {
      const batch: NewEvent[] = [frameDelta(`d${i}`), frameDelta(`e${i}`)];
      if (i % 7 === 0)
        batch.push({
          type: "tool.call",
          turn: "t1",
          data: { id: `c${i}`, name: "n", arguments: { pad: "x".repeat(i * 3) } },
        });
      if (i % 50 === 0) batch.push(delta("other turn", `t${i}`));
      all.push(...(await log.append(batch)));
    }
    expect((await fs.stat(file)).size).toBeGreaterThan(64 * 1024);
    for (const after of [0, 1, 2, 3, 99, 500, 777, all.length - 10, all.length - 1, all.length]) {
      expect(await log.read(after, 10)).toEqual(all.slice(after, after + 10));
      expect(await readEventsFile(file, undefined, { after, limit: 10 })).toEqual(
        all.slice(after, after + 10),
      );
    }
  });
});

describe("open state", () => {
  const request: NewEvent = {
    type: "permission.requested",
    turn: "t2",
    data: { id: "p1", tool: "bash" } as never,
  };

  async function history(log: JsonlEventLog): Promise<void> {
    await log.append([{ type: "turn.started", turn: "t1", data: {} }, delta("a")]);
    await log.append([{ type: "turn.settled", turn: "t1", data: { status: "completed" } }]);
  }

  it("is what the whole log says, after a crash between a write and the state's update", async () => {
    const log = await open();
    await history(log);
    await log.close();
    const stale = await fs.readFile(statePath(file));
    const again = await open();
    await again.append([{ type: "turn.started", turn: "t2", data: {} }, request, delta("b", "t2")]);
    await again.close();
    await fs.writeFile(statePath(file), stale); // the state as it was before the last write
    const reopened = await open();
    expect(reopened.openState()).toMatchObject({
      openTurns: ["t2"],
      requests: [{ seq: 5, data: { id: "p1" } }],
    });
    expect(reopened.lastSeq).toBe(6);
  });

  it("is rebuilt from the log when the saved state does not match the file", async () => {
    const log = await open();
    await history(log);
    await log.append([{ type: "turn.started", turn: "t2", data: {} }, request]);
    await log.close();
    const saved = JSON.parse(await fs.readFile(statePath(file), "utf8"));
    for (const wrong of [
      { ...saved, openTurns: [], requests: [], hash: "0".repeat(64) },
      { ...saved, openTurns: [], requests: [], seq: saved.seq + 1 },
      { ...saved, openTurns: [], requests: [], end: saved.end + 10 },
      "not json",
    ]) {
      await fs.writeFile(statePath(file), typeof wrong === "string" ? wrong : JSON.stringify(wrong));
      const reopened = await open();
      expect(reopened.openState()).toMatchObject({ openTurns: ["t2"], requests: [{ data: { id: "p1" } }] });
      await reopened.close();
    }
  });

  it("cuts a torn continuation line at open", async () => {
    const log = await open();
    await log.append([frameDelta("a")]);
    await log.append([frameDelta("b")]);
    await log.close();
    const good = (await fs.stat(file)).size;
    expect((await fs.readFile(file, "utf8")).split("\n").at(-2)).toMatch(/^\[2,\d+,"b"\]$/);
    await fs.appendFile(file, '[3,2,"c');
    const again = await open();
    expect(again.lastSeq).toBe(2);
    expect((await fs.stat(file)).size).toBe(good);
    expect((await again.append([frameDelta("c")]))[0]?.seq).toBe(3);
    expect((await again.read(0)).map((e) => (e.data as { text: string }).text)).toEqual(["a", "b", "c"]);
  });
});

describe("an idle log", () => {
  it("closes its file, and opens it again for the next append or read", async () => {
    const log = await open(5);
    await log.append([delta("a")]);
    await expect.poll(() => log.holdsDescriptor).toBe(false);
    expect((await log.read(0)).map((e) => e.seq)).toEqual([1]);
    expect((await log.append([delta("b")]))[0]?.seq).toBe(2);
    await expect.poll(() => log.holdsDescriptor).toBe(false);
    await expect(JsonlEventLog.open(file, "s1")).rejects.toThrow(/already open in this process/);
    expect(await readEventsFile(file)).toHaveLength(2);
  });

  it("fails an append, without hanging, when its file cannot be opened again", async () => {
    const log = await open(5);
    await log.append([delta("a")]);
    await expect.poll(() => log.holdsDescriptor).toBe(false);
    await fs.rename(file, `${file}.moved`);
    await expect(log.append([delta("b")])).rejects.toThrow(/cannot reopen/);
    await fs.rename(`${file}.moved`, file);
    expect((await log.append([delta("c")]))[0]?.seq).toBe(2);
  });
});

describe("deferred appends", () => {
  it("writes a deferred append with the next append's commit, or alone once its wait is over", async () => {
    const log = await open();
    const commits: number[][] = [];
    log.subscribe((batch) => commits.push(batch.map((e) => e.seq)));
    let result: SessionEvent[] | undefined;
    const deferred = log.append([delta("result")], { deferred: true }).then((r) => {
      result = r;
    });
    await new Promise((r) => setImmediate(r));
    expect(result).toBeUndefined(); // not written on its own: it waits for company
    const [call] = await log.append([{ type: "user.prompt", data: { text: "next" } }]);
    await deferred;
    // One commit for both, in append order.
    expect(commits).toEqual([[1, 2]]);
    expect([result?.[0]?.seq, call?.seq]).toEqual([1, 2]);
    // Alone, it is written once its wait is over, and nothing is lost on close.
    const [alone] = await log.append([delta("alone")], { deferred: true });
    expect(alone?.seq).toBe(3);
    const last = log.append([delta("at close")], { deferred: true });
    await log.close();
    expect((await last)[0]?.seq).toBe(4);
    expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it("waits for company too when made as a commit is delivered (a tool's result, answered at once)", async () => {
    const log = await open();
    const commits: number[][] = [];
    let result: Promise<SessionEvent[]> | undefined;
    log.subscribe((batch) => {
      commits.push(batch.map((e) => e.seq));
      result ??= log.append([delta("result")], { deferred: true });
    });
    await log.append([{ type: "user.prompt", data: { text: "call" } }]);
    await new Promise((r) => setImmediate(r));
    expect(commits).toEqual([[1]]); // the result did not start a commit of its own
    await log.append([{ type: "user.prompt", data: { text: "next call" } }]);
    expect((await result)?.[0]?.seq).toBe(2);
    expect(commits).toEqual([[1], [2, 3]]);
  });
});

describe("a log of another format", () => {
  it("is refused with an error naming its format and the one this version reads", async () => {
    await fs.writeFile(
      file,
      '{"brain_log":3,"session":"s1"}\n{"seq":1,"ts":"2026-01-01T00:00:00Z","e":[]}\n',
    );
    await expect(readEventsFile(file)).rejects.toThrow(
      /header of log format 3, which this version of Brain cannot read \(it reads format 2\)/,
    );
  });
});
