// One test suite for every session store: the embedded one (src/store/fs) and the cluster one (src/store/nats)
// pass the same tests through the interfaces the core uses (SessionStore, EventLog, Checkpoints), so the core
// cannot tell which it has. Each store's own test file calls storeSuite() with a factory.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionStore } from "../core/brain.js";
import { CheckpointStore, type Checkpoints } from "../core/checkpoints/index.js";
import { BrainError } from "../core/errors.js";
import { PendingRequests, pendingInStore } from "../core/pending.js";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { pageOf } from "../server/paging.js";

export interface StoreUnderTest {
  store: SessionStore;
  cleanup(): Promise<void>;
}

const base = { harness: "process", config: { model: "m1" } };
const closed: NewEvent = { type: "session.closed", data: {} };
const prompt = (text: string): NewEvent => ({ type: "user.prompt", turn: "t1", data: { text } }) as NewEvent;

/** As Brain picks them: the store's own, else files under paths(id).checkpoints. */
export function checkpointsOf(store: SessionStore, id: string): Checkpoints {
  return store.checkpoints?.(id) ?? new CheckpointStore(store.paths(id).checkpoints);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return err instanceof BrainError ? err.code : `not coded: ${String(err)}`;
  }
  return "resolved";
}

export function storeSuite(name: string, make: () => Promise<StoreUnderTest>): void {
  describe(`${name}: the session store contract`, () => {
    let subject: StoreUnderTest;
    let store: SessionStore;
    let scratch: string;

    beforeEach(async () => {
      subject = await make();
      store = subject.store;
      scratch = await mkdtemp(path.join(tmpdir(), "brain-suite-"));
    });
    afterEach(async () => {
      await subject.cleanup();
      await rm(scratch, { recursive: true, force: true });
    });

    it("creates, gets, lists oldest first, updates and refuses a duplicate id", async () => {
      const a = await store.create({ ...base, id: "a1" });
      expect(a).toMatchObject({ ...base, id: "a1", status: "open" });
      const b = await store.create({ ...base, id: "b1", tenant: "t" });
      expect(await store.get("a1")).toEqual(a);
      expect(await store.get("nope")).toBeUndefined();
      expect((await store.list()).map((r) => r.id)).toEqual(["a1", "b1"]);
      expect(await codeOf(store.create({ ...base, id: "a1" }))).toBe("bad_request");
      const updated = await store.update("b1", { status: "closed" });
      expect(updated).toEqual({ ...b, status: "closed" });
      expect(await store.get("b1")).toEqual(updated);
      expect(await codeOf(store.update("nope", { status: "closed" }))).toBe("bad_request");
      expect(await codeOf(store.get("../x"))).toBe("bad_request");
      expect(await codeOf(store.create({ ...base, config: { model: 3 } } as never))).toBe("bad_request");
    });

    it("lists in one order (created_at, then id) that pages walk either way, updates and removes included", async () => {
      // Made in a burst: several share a millisecond, so the id decides between them.
      for (const id of ["p4", "p1", "p6", "p3", "p5", "p2", "p7"]) await store.create({ ...base, id });
      await store.update("p6", { status: "closed" }); // an update keeps a session's place
      const all = await store.list();
      const expected = [...all]
        .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
        .map((r) => r.id);
      expect(all.map((r) => r.id)).toEqual(expected);
      expect(all.find((r) => r.id === "p6")?.status).toBe("closed");
      const walk = async (order: "oldest" | "newest") => {
        const seen: string[][] = [];
        let after: string | undefined;
        do {
          const listed = await store.list();
          const page = pageOf(order === "newest" ? listed.reverse() : listed, { limit: 3, after }, "session");
          seen.push(page.items.map((r) => r.id));
          after = page.next;
        } while (after !== undefined);
        return seen;
      };
      expect(await walk("oldest")).toEqual([expected.slice(0, 3), expected.slice(3, 6), expected.slice(6)]);
      const newest = [...expected].reverse();
      expect(await walk("newest")).toEqual([newest.slice(0, 3), newest.slice(3, 6), newest.slice(6)]);
      const cursor = expected[2]!;
      await store.remove(cursor);
      const left = await store.list();
      expect(left.map((r) => r.id)).toEqual(expected.filter((id) => id !== cursor));
      // A page after a session removed since is refused, naming the cursor: the client lists again.
      expect(() => pageOf(left, { limit: 3, after: cursor }, "session")).toThrow(/"after"/);
    });

    it("keeps concurrent updates of one record, none lost", async () => {
      await store.create({ ...base, id: "u1" });
      await Promise.all([
        store.update("u1", { config: { model: "m2" } }),
        store.update("u1", { tenant: "t2" }),
        store.update("u1", { status: "closed" }),
      ]);
      expect(await store.get("u1")).toMatchObject({
        config: { model: "m2" },
        tenant: "t2",
        status: "closed",
      });
    });

    it("appends dense seqs, reads from any seq, and continues after a reopen", async () => {
      await store.create({ ...base, id: "l1" });
      const log = await store.openLog("l1");
      expect(log.lastSeq).toBe(0);
      const first = await log.append([prompt("one"), prompt("two")]);
      expect(first.map((e) => e.seq)).toEqual([1, 2]);
      expect(first[0]).toMatchObject({
        session: "l1",
        turn: "t1",
        type: "user.prompt",
        data: { text: "one" },
      });
      expect(Number.isNaN(Date.parse(first[0]!.ts))).toBe(false);
      await log.append([closed]);
      expect(log.lastSeq).toBe(3);
      expect((await log.read(1)).map((e) => e.seq)).toEqual([2, 3]);
      expect((await log.read(0, 2)).map((e) => e.seq)).toEqual([1, 2]);
      expect(await log.read(3)).toEqual([]);
      expect(await codeOf(log.read(-1))).toBe("bad_request");
      await log.close();
      expect(await codeOf(log.append([closed]))).toBe("brain_error");

      const again = await store.openLog("l1");
      expect(again.lastSeq).toBe(3);
      expect((await again.append([closed]))[0]!.seq).toBe(4);
      expect((await again.read(0)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((await again.read(2, 1)).map((e) => [e.seq, e.type])).toEqual([[3, "session.closed"]]);
      await again.close();
      expect((await store.readEvents("l1")).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((await store.readEvents("l1", { after: 1, limit: 2 })).map((e) => e.seq)).toEqual([2, 3]);
      expect(await store.lastSeq?.("l1")).toBe(4);
      await store.create({ ...base, id: "l0" });
      await (await store.openLog("l0")).close();
      expect(await store.lastSeq?.("l0")).toBe(0);
    });

    it("gives a closed log's last seq and pending requests as folding all its events does", async () => {
      await store.create({ ...base, id: "p1" });
      const log = await store.openLog("p1");
      const ask = (type: string, id: string): NewEvent => ({ type, turn: "t1", data: { id } }) as NewEvent;
      await log.append([prompt("one"), ask("tool.call", "c1"), ask("permission.requested", "r1")]);
      await log.append([ask("question.requested", "q1"), ask("tool.result", "c1"), ask("tool.call", "c2")]);
      await log.append([ask("permission.resolved", "r1"), ask("permission.requested", "r1")]);
      await log.close();
      const all = new PendingRequests();
      for (const e of await store.readEvents("p1")) all.observe(e);
      expect(all.list().map((r) => r.id)).toEqual(["q1", "c2", "r1"]);
      expect(await pendingInStore(store, "p1")).toEqual({ lastSeq: 8, pending: all.list() });
    });

    it("commits appends made in one tick together, and shows subscribers only durable events", async () => {
      await store.create({ ...base, id: "g1" });
      const log = await store.openLog("g1");
      const batches: SessionEvent[][] = [];
      const readable: number[] = [];
      log.subscribe((events) => {
        batches.push(events);
        readable.push(log.lastSeq);
      });
      const [a, b, c] = await Promise.all([
        log.append([prompt("a")]),
        log.append([prompt("b")]),
        log.append([closed]),
      ]);
      expect([a, b, c].map((x) => x[0]!.seq)).toEqual([1, 2, 3]);
      expect(batches.map((batch) => batch.map((e) => e.seq))).toEqual([[1, 2, 3]]);
      expect(readable).toEqual([3]);
      await log.close();
    });

    it("reads every event after a cursor however many there are, from the live log", async () => {
      await store.create({ ...base, id: "m1" });
      const log = await store.openLog("m1");
      await Promise.all(Array.from({ length: 5000 }, (_, i) => log.append([prompt(String(i))])));
      expect((await log.read(0)).length).toBe(5000);
      expect((await log.read(10)).map((e) => e.seq)).toEqual(Array.from({ length: 4990 }, (_, i) => i + 11));
      expect((await log.read(0, 3)).map((e) => e.seq)).toEqual([1, 2, 3]);
      await log.close();
    });

    it("refuses a second writer of one log (one owner per log)", async () => {
      await store.create({ ...base, id: "o1" });
      const log = await store.openLog("o1");
      expect(await codeOf(store.openLog("o1"))).toBe("locked");
      await log.append([closed]);
      await log.close();
      const next = await store.openLog("o1");
      expect(next.lastSeq).toBe(1);
      await next.close();
    });

    it("checkpoints incrementally and restores into a fresh directory", async () => {
      await store.create({ ...base, id: "c1" });
      const native = store.paths("c1").native;
      await mkdir(native, { recursive: true });
      await writeFile(path.join(native, "log.jsonl"), "one\n");
      await writeFile(path.join(native, "state.json"), "{}");
      const files = [
        { path: "log.jsonl", size: 4, append_only: true },
        { path: "state.json", size: 2, append_only: false },
      ];
      const checkpoints = checkpointsOf(store, "c1");
      // Checkpoints are made by the session's owner: the node holding its log.
      const log = await store.openLog("c1");
      const m1 = await checkpoints.create(native, files);
      await writeFile(path.join(native, "log.jsonl"), "one\ntwo\n");
      files[0]!.size = 8;
      const m2 = await checkpoints.create(native, files);
      await log.close();
      const log2 = m2.files.find((f) => f.path === "log.jsonl")!;
      // The append-only file's second checkpoint sends only its new bytes.
      expect(log2.segments.map((s) => [s.offset, s.length])).toEqual([
        [0, 4],
        [4, 4],
      ]);
      expect(await checkpoints.list()).toEqual([m1.id, m2.id]);
      expect((await checkpoints.get("latest")).id).toBe(m2.id);
      const into = path.join(scratch, "restored");
      await checkpointsOf(store, "c1").restore(m2.id, into);
      expect(await readFile(path.join(into, "log.jsonl"), "utf8")).toBe("one\ntwo\n");
      expect(await readFile(path.join(into, "state.json"), "utf8")).toBe("{}");
      expect(await codeOf(checkpoints.get("999999"))).toBe("bad_request");
    });

    it("dates a session by its log's last write, and a session that does not exist by nothing", async () => {
      await store.create({ ...base, id: "d1" });
      const log = await store.openLog("d1");
      await log.append([prompt("one")]);
      const first = await store.updatedAt?.("d1");
      await log.append([prompt("two")]);
      await log.close();
      const second = await store.updatedAt?.("d1");
      expect(Number.isNaN(Date.parse(first ?? ""))).toBe(false);
      expect(Date.parse(second ?? "")).toBeGreaterThanOrEqual(Date.parse(first ?? ""));
      expect(await store.updatedAt?.("none")).toBeUndefined();
    });

    it("removes a session with its log and checkpoints", async () => {
      await store.create({ ...base, id: "r1" });
      const log = await store.openLog("r1");
      await log.append([closed]);
      await log.close();
      await store.remove("r1");
      expect(await store.get("r1")).toBeUndefined();
      expect(await store.list()).toEqual([]);
      await store.remove("r1"); // removing a missing session is not an error
      await store.create({ ...base, id: "r1" });
      const fresh = await store.openLog("r1");
      expect(fresh.lastSeq).toBe(0);
      await fresh.close();
    });
  });
}
