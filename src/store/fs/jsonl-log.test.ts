import { constants } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { TextBytes } from "../../protocol/text-bytes.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { burnMark } from "./log-format.js";
import type { LogIO } from "./log-io.js";
import { MODES, testIO } from "./testing/fault-io.js";

const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });

let dir: string;
let file: string;
const opened: JsonlEventLog[] = [];

async function open(io?: LogIO): Promise<JsonlEventLog> {
  const log = await JsonlEventLog.open(file, "s1", io);
  opened.push(log);
  return log;
}

const fileSize = async () => (await fs.stat(file)).size;
const lines = async () => (await fs.readFile(file, "utf8")).split("\n").filter((l) => l !== "");

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-log-"));
  file = path.join(dir, "events.jsonl");
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((l) => l.close()));
  await fs.rm(dir, { recursive: true, force: true });
});

describe("JsonlEventLog", () => {
  it("writes a header, then events without their session, with dense seqs from 1", async () => {
    const log = await open();
    const [a, b] = await log.append([{ type: "turn.started", turn: "t1", data: {} }, delta("hi")]);
    const [c] = await log.append([{ type: "user.prompt", data: { text: "x" } }]);
    expect([a?.seq, b?.seq, c?.seq]).toEqual([1, 2, 3]);
    expect(log.lastSeq).toBe(3);
    const text = await lines();
    expect(text[0]).toBe('{"brain_log":2,"session":"s1"}');
    expect(text[1]).toMatch(/^\{"seq":1,"ts":"[^"]+","turn":"t1","type":"turn.started","data":\{\}\}$/);
    expect(text[2]).toMatch(/^\{"seq":2,"ts":"[^"]+","turn":"t1","d":\["hi"\]\}$/);
    expect(JSON.parse(text[3]!)).toEqual({ seq: 3, ts: c?.ts, type: "user.prompt", data: { text: "x" } });
    expect(await readEventsFile(file)).toEqual([a, b, c]);
    expect(c).toEqual({ seq: 3, ts: c?.ts, session: "s1", type: "user.prompt", data: { text: "x" } });
  });

  describe.each(MODES)("group commit (O_DSYNC writes: %s)", (syncWrites) => {
    it("group-commits appends made together: dense seqs in call order, one durable write", async () => {
      const io = testIO(syncWrites);
      const log = await open(io);
      const before = { ...io.counts };
      const calls = Array.from({ length: 300 }, (_, i) =>
        log.append(i % 10 === 0 ? [delta(`${i}a`), delta(`${i}b`)] : [delta(`${i}`)]),
      );
      const results = await Promise.all(calls);
      expect(results.flat().map((e) => e.seq)).toEqual(Array.from({ length: 330 }, (_, i) => i + 1));
      expect(io.counts.write - before.write).toBe(1);
      expect(io.counts.datasync - before.datasync).toBe(io.syncWrites ? 0 : 1);
      // No write may skip its fdatasync on a descriptor opened without O_DSYNC.
      const dsync = constants.O_DSYNC ?? 0;
      expect(io.flags.map((f) => (f & dsync) !== 0)).toEqual(io.flags.map(() => io.syncWrites));
      expect((await log.read(0)).map((e) => e.seq)).toEqual(results.flat().map((e) => e.seq));
    });

    it("batches the appends that arrive while a flush is in flight into the next flush", async () => {
      const io = testIO(syncWrites);
      const log = await open(io);
      const release = io.holdDurable();
      const before = { ...io.counts };
      const first = log.append([delta("first")]);
      await new Promise((r) => setImmediate(r)); // the first flush is now waiting to be durable
      const later: Promise<SessionEvent[]>[] = [];
      for (let tick = 0; tick < 5; tick++) {
        for (let i = 0; i < 20; i++) later.push(log.append([delta(`${tick}.${i}`)]));
        await new Promise((r) => setImmediate(r));
      }
      expect(log.lastSeq).toBe(0);
      release();
      expect((await first)[0]?.seq).toBe(1);
      expect((await Promise.all(later)).flat().map((e) => e.seq)).toEqual(
        Array.from({ length: 100 }, (_, i) => i + 2),
      );
      expect(io.counts.datasync - before.datasync).toBe(io.syncWrites ? 0 : 2);
      expect(io.counts.write - before.write).toBe(2);
    });
  });

  it("delivers a large commit in parts, in order, and resolves each append with its own events", async () => {
    const log = await open();
    const parts: SessionEvent[][] = [];
    log.subscribe((events) => parts.push(events));
    // One commit of 3 600 events: appends spanning the parts, single ones, and appends that ignore their result.
    const calls = Array.from({ length: 26 }, (_, k) => {
      const events = Array.from({ length: k % 2 === 0 ? 199 : 1 }, (_, i) => delta(`${k}.${i} é`));
      return log.append(events, k % 3 === 0 ? { ignoreResult: true } : undefined);
    });
    calls.push(log.append(Array.from({ length: 1000 }, (_, i) => delta(`tail ${i}`))));
    const results = await Promise.all(calls);
    const all = await log.read(0);
    expect(all).toHaveLength(3600);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.flat()).toEqual(all);
    let seq = 1;
    results.forEach((events, k) => {
      const count = k === 26 ? 1000 : k % 2 === 0 ? 199 : 1;
      if (k < 26 && k % 3 === 0) expect(events).toEqual([]);
      else expect(events).toEqual(all.slice(seq - 1, seq - 1 + count));
      seq += count;
    });
  });

  it("reads from any seq using byte offsets, also after reopening", async () => {
    const log = await open();
    const written: SessionEvent[] = [];
    for (let b = 0; b < 10; b++) {
      // Multi-byte text and U+2028 make byte offsets differ from string lengths.
      written.push(...(await log.append([0, 1, 2, 3, 4].map((i) => delta(`é🙂\u2028 ${b}.${i}`)))));
    }
    expect(await log.read(0)).toEqual(written);
    expect(await log.read(10, 5)).toEqual(written.slice(10, 15));
    expect(await log.read(49)).toEqual(written.slice(49));
    expect(await log.read(50)).toEqual([]);
    expect(await log.read(99)).toEqual([]);
    expect(await log.read(3, 0)).toEqual([]);
    await expect(log.read(-1)).rejects.toThrow(/bad read range/);
    await log.close();
    const again = await open();
    expect(again.lastSeq).toBe(50);
    expect(await again.read(37, 3)).toEqual(written.slice(37, 40));
    expect(await readEventsFile(file)).toEqual(written);
  });

  it.each(MODES)(
    "shows events to readers and subscribers only once durable, in order (O_DSYNC writes: %s)",
    async (syncWrites) => {
      const io = testIO(syncWrites);
      const log = await open(io);
      const seen: number[][] = [];
      const unsubscribe = log.subscribe((events) => seen.push(events.map((e) => e.seq)));
      const release = io.holdDurable();
      const a = log.append([delta("a"), delta("b")]);
      const b = log.append([delta("c")]);
      await new Promise((r) => setImmediate(r));
      expect(seen).toEqual([]);
      expect(await log.read(0)).toEqual([]);
      expect(log.lastSeq).toBe(0);
      release();
      await Promise.all([a, b]);
      expect(seen).toEqual([[1, 2, 3]]);
      await log.append([delta("d")]);
      expect(seen).toEqual([[1, 2, 3], [4]]);
      unsubscribe();
      await log.append([delta("e")]);
      expect(seen).toHaveLength(2);
    },
  );

  it("keeps the log going when a subscriber throws", async () => {
    const log = await open();
    const seen: number[] = [];
    log.subscribe(() => {
      throw new Error("boom");
    });
    log.subscribe((events) => seen.push(...events.map((e) => e.seq)));
    const warned = new Promise((r) => process.once("warning", r));
    await log.append([delta("a")]);
    await log.append([delta("b")]);
    expect(String(await warned)).toMatch(/subscriber threw: boom/);
    expect(seen).toEqual([1, 2]);
  });

  it("continues the seqs after close and reopen", async () => {
    const log = await open();
    await log.append([delta("a"), delta("b"), delta("c")]);
    await log.close();
    const again = await open();
    expect(again.lastSeq).toBe(3);
    expect((await again.append([delta("d")]))[0]?.seq).toBe(4);
    expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it("close flushes queued appends; later appends and reads reject", async () => {
    const log = await open();
    const pending = [log.append([delta("a")]), log.append([delta("b")])];
    await log.close();
    expect((await Promise.all(pending)).flat().map((e) => e.seq)).toEqual([1, 2]);
    expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2]);
    await expect(log.append([delta("c")])).rejects.toThrow(/is closed/);
    await expect(log.read(0)).rejects.toThrow(/is closed/);
    await log.close(); // idempotent
  });

  it("rejects an event JSON cannot hold on its own, without disturbing the others", async () => {
    const log = await open();
    const ok1 = log.append([delta("a")]);
    const bad = log.append([{ type: "tool.call", data: { id: "1", name: "t", arguments: { n: 1n } } }]);
    const ok2 = log.append([delta("b")]);
    await expect(bad).rejects.toThrow(/not serializable/);
    expect([(await ok1)[0]?.seq, (await ok2)[0]?.seq]).toEqual([1, 2]);
  });

  describe("torn tail", () => {
    async function withTail(tail: string): Promise<number> {
      const log = await open();
      await log.append([delta("a"), delta("b")]);
      await log.close();
      const good = await fileSize();
      await fs.appendFile(file, tail);
      return good;
    }

    for (const [name, tail] of [
      ["a partial line", '{"seq":3,"ts":"2024'],
      [
        "a complete line without its newline",
        '{"seq":3,"ts":"x","session":"s1","type":"user.interrupt","data":{}}',
      ],
      ["a last line that is not JSON", "\u0000\u0000\u0000\n"],
    ] as const) {
      it(`cuts ${name} at open and carries on`, async () => {
        const good = await withTail(tail);
        expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2]); // reading alone leaves it
        expect(await fileSize()).toBeGreaterThan(good);
        const log = await open();
        expect(log.lastSeq).toBe(2);
        expect(await fileSize()).toBe(good);
        expect((await log.append([delta("c")]))[0]?.seq).toBe(3);
        expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2, 3]);
      });
    }
  });

  describe("corruption in the middle", () => {
    // Written in the format of older files (a whole event per line): those still open and read.
    const old = (seq: number, text: string) =>
      JSON.stringify({
        seq,
        ts: "2026-01-01T00:00:00.000Z",
        session: "s1",
        turn: "t1",
        type: "assistant.delta",
        data: { text },
      });
    async function corruptLine2(line: string): Promise<void> {
      const log = await open();
      await log.append([delta("a"), delta("b"), delta("c")]);
      await log.close(); // leaves a saved state behind: it must not hide what the file now says
      await fs.writeFile(file, `${[old(1, "a"), line, old(3, "c")].join("\n")}\n`);
    }

    it("reports a line that is not JSON with the file and line number", async () => {
      await corruptLine2("{oops");
      const message = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: line 2: not valid JSON`);
      await expect(JsonlEventLog.open(file, "s1")).rejects.toThrow(message);
      await expect(readEventsFile(file)).rejects.toThrow(message);
    });

    it("reports a seq out of order", async () => {
      await corruptLine2('{"seq":7,"ts":"x","session":"s1","type":"user.interrupt","data":{}}');
      await expect(JsonlEventLog.open(file, "s1")).rejects.toThrow(
        /line 3: seq 3 where one above 7 was expected/,
      );
    });

    it("reports a torn line followed by a partial one", async () => {
      await fs.writeFile(file, `${old(1, "a")}\n{"seq":2\n{"seq":3`);
      await expect(JsonlEventLog.open(file, "s1")).rejects.toThrow(/line 2: not valid JSON/);
    });
  });

  describe.each(MODES)("disk failure (O_DSYNC writes: %s)", (syncWrites) => {
    for (const [op, code] of [
      ["write", "ENOSPC"],
      [syncWrites ? "write" : "datasync", "EIO"],
    ] as const) {
      it(`rejects the whole batch on a failed ${op}, cuts the file back and never gives its seqs again`, async () => {
        const io = testIO(syncWrites);
        const log = await open(io);
        await log.append([delta("a"), delta("b")]);
        const durable = await fileSize();
        io.failNext(op, code);
        const seen: number[] = [];
        log.subscribe((events) => seen.push(...events.map((e) => e.seq)));
        const batch = [log.append([delta("c"), delta("d")]), log.append([delta("e")])];
        for (const p of batch) {
          await expect(p).rejects.toThrow(`event log ${file}: append failed: ${code}`);
        }
        expect(await fileSize()).toBe(durable + burnMark(5).length); // the cut, then the mark of 3..5
        expect(log.lastSeq).toBe(2);
        expect(seen).toEqual([]);
        // c, d and e were one batch, laid out as 3..5: a reader without the lock may have seen those lines
        // before the cut, so f comes after them, never as a second seq 3.
        expect((await log.append([delta("f")]))[0]?.seq).toBe(6);
        expect((await log.read(0)).map((e) => (e.data as { text: string }).text)).toEqual(["a", "b", "f"]);
        await log.close();
        expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2, 6]);
      });
    }

    it("rejects a message written from its blocks (one write of several buffers) on a full disk", async () => {
      const io = testIO(syncWrites);
      const log = await open(io);
      await log.append([delta("a")]);
      const durable = await fileSize();
      const acc = new TextBytes();
      for (let i = 0; i < 3000; i++) acc.add(`piece ${i} ${"z".repeat(40)} `); // several blocks
      const message: NewEvent = { type: "assistant.message", turn: "t1", data: acc.message("end_turn") };
      io.failNext("write", "ENOSPC");
      await expect(log.append([message])).rejects.toThrow(/ENOSPC/);
      expect(await fileSize()).toBe(durable + burnMark(2).length);
      const before = io.counts.write;
      const [stored] = await log.append([message]);
      expect(io.counts.write - before).toBe(1); // the message's prefix, blocks and end in one write
      expect(stored).toMatchObject({ seq: 3, data: { text: acc.text(), stop_reason: "end_turn" } });
      await log.close();
      expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 3]);
      expect((await readEventsFile(file))[1]?.data).toEqual(stored?.data);
    });

    it("fails the appends queued behind a failed batch, so none is written after the gap", async () => {
      const io = testIO(syncWrites);
      const log = await open(io);
      await log.append([delta("a")]);
      io.failNext(io.durable, "EIO");
      const release = io.holdDurable();
      const failed = log.append([delta("lost1"), delta("lost2")]);
      await new Promise((r) => setImmediate(r));
      const queued = log.append([delta("lost3, made before the failure was known")]);
      release();
      await expect(failed).rejects.toThrow(/EIO/);
      await expect(queued).rejects.toThrow(/EIO/);
      expect(log.lastSeq).toBe(1);
      // Appends made once the failure is known go on, above the failed batch's seqs (2, 3).
      expect((await log.append([delta("next")]))[0]?.seq).toBe(4);
      expect((await readEventsFile(file)).map((e) => (e.data as { text: string }).text)).toEqual([
        "a",
        "next",
      ]);
    });

    it("retries cutting the file back before the next write when the first cut fails", async () => {
      const io = testIO(syncWrites);
      const log = await open(io);
      await log.append([delta("a")]);
      const durable = await fileSize();
      io.failNext("write", "ENOSPC");
      io.failNext("truncate", "EIO");
      await expect(log.append([delta("a long event that leaves half of itself behind")])).rejects.toThrow(
        /ENOSPC/,
      );
      expect(await fileSize()).toBeGreaterThan(durable); // the partial write is still there
      expect((await log.append([delta("b")]))[0]?.seq).toBe(3);
      expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 3]);
    });

    // A failed sync after a whole write: the batch's lines were in the file, and stay there while the cut fails.
    it.skipIf(syncWrites)("never gives again a seq a reader without the lock may have read", async () => {
      const io = testIO(syncWrites);
      const log = await open(io);
      await log.append([delta("a")]);
      io.failNext("datasync", "EIO");
      io.failNext("truncate", "EIO");
      await expect(log.append([delta("complete but never durable")])).rejects.toThrow(/EIO/);
      // Another process (a CLI, a daemon serving a session held elsewhere) reads the file now.
      const seen = await readEventsFile(file);
      expect(seen.map((e) => e.seq)).toEqual([1, 2]);
      const cursor = seen.at(-1)!.seq;
      await log.append([delta("next")]);
      // Reading on from its cursor, it gets what came after; a second seq 2 would have been skipped.
      const after = (await readEventsFile(file)).filter((e) => e.seq > cursor);
      expect(after.map((e) => (e.data as { text: string }).text)).toEqual(["next"]);
      await log.close();
    });

    it("cuts a failed batch left behind at close", async () => {
      const io = testIO(syncWrites);
      const log = await open(io);
      await log.append([delta("a")]);
      const durable = await fileSize();
      io.failNext(io.durable, "EIO");
      io.failNext("truncate", "EIO");
      await expect(log.append([delta("complete but never durable")])).rejects.toThrow(/EIO/);
      expect(await fileSize()).toBeGreaterThan(durable);
      await log.close();
      expect(await fileSize()).toBe(durable + burnMark(2).length);
      expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1]);
    });
  });
});
