import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StoreError } from "./errors.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { listSealed } from "./segments.js";
import { summaryOf } from "./session-record.js";
import { FsSessionStore } from "./session-store.js";
import { writeSegmented } from "./testing/segmented.js";

let home: string;
let store: FsSessionStore;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-home-"));
  store = new FsSessionStore(home);
});

afterEach(async () => {
  vi.useRealTimers();
  await fs.rm(home, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };

describe("FsSessionStore", () => {
  it("counts a log's bytes over all its segments, sealed and active (limits.log_bytes_per_session)", async () => {
    const { id } = await store.create(base);
    const events = path.join(home, "sessions", id, "events.jsonl");
    const log = await JsonlEventLog.open(events, id, undefined, { segmentBytes: 1024 });
    await writeSegmented(log);
    await log.close();
    const files = [events, ...(await listSealed(events)).map((s) => s.path)];
    expect(files.length).toBeGreaterThanOrEqual(3);
    const sizes = await Promise.all(files.map(async (f) => (await fs.stat(f)).size));
    expect(await store.logBytes(id)).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(await store.logBytes("no-such-session")).toBe(0);
  });

  it("creates a session with its directory layout and reads it back", async () => {
    const record = await store.create(base);
    expect(record.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(record).toMatchObject({ ...base, status: "open" });
    expect(Number.isNaN(Date.parse(record.created_at))).toBe(false);
    const paths = store.paths(record.id);
    expect(paths.dir).toBe(path.join(home, "sessions", record.id));
    expect((await fs.readdir(paths.dir)).sort()).toEqual([
      "checkpoints",
      "events.jsonl",
      "native",
      "session.json",
    ]);
    expect((await fs.stat(paths.events)).size).toBe(0);
    expect(await store.get(record.id)).toEqual(record);
    expect(JSON.parse(await fs.readFile(paths.record, "utf8"))).toEqual(record);
  });

  it("makes $BRAIN_HOME and each session's directories 0700, its record and log 0600", async () => {
    const nested = path.join(home, "fresh-home");
    const own = new FsSessionStore(nested);
    const record = await own.create(base);
    const paths = own.paths(record.id);
    const log = await own.openLog(record.id);
    await log.append([{ type: "session.closed", data: {} }]);
    await log.close();
    const mode = async (p: string) => (await fs.stat(p)).mode & 0o777;
    for (const dir of [nested, path.join(nested, "sessions"), paths.dir, paths.native, paths.checkpoints])
      expect(await mode(dir), dir).toBe(0o700);
    expect(await mode(paths.record)).toBe(0o600);
    expect(await mode(paths.events)).toBe(0o600);
    await own.update(record.id, { status: "closed" });
    expect(await mode(paths.record)).toBe(0o600);
  });

  it("takes an explicit id and forked_from, and refuses a duplicate id", async () => {
    const record = await store.create({
      ...base,
      id: "fork_1",
      forked_from: { session: "a", checkpoint: "c1" },
    });
    expect(record.forked_from).toEqual({ session: "a", checkpoint: "c1" });
    await expect(store.create({ ...base, id: "fork_1" })).rejects.toThrow(/already exists/);
  });

  it("rejects a bad record on create, naming the field", async () => {
    await expect(store.create({ harness: "", config: {} })).rejects.toThrow(/field "harness"/);
    await expect(store.create({ harness: "x", config: { model: 3 } as never })).rejects.toThrow(
      /field "config.model"/,
    );
    expect(await store.list()).toEqual([]);
  });

  it("returns undefined for an unknown session", async () => {
    expect(await store.get("nope")).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it("lists sessions oldest first", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    for (const [id, time] of [
      ["c", "2024-01-03T00:00:00Z"],
      ["a", "2024-01-02T00:00:00Z"],
      ["b", "2024-01-01T00:00:00Z"],
    ] as const) {
      vi.setSystemTime(new Date(time));
      await store.create({ ...base, id });
    }
    await fs.mkdir(path.join(home, "sessions", "half-made")); // a create cut short: no session.json
    expect((await store.list()).map((r) => r.id)).toEqual(["b", "a", "c"]);
  });

  it("lists from memory what it read before, and sees what this store and another one on the same home change", async () => {
    const [a, b] = [await store.create({ ...base, id: "a" }), await store.create({ ...base, id: "b" })];
    const byId = async (s: FsSessionStore) => Object.fromEntries((await s.list()).map((r) => [r.id, r]));
    expect(Object.keys(await byId(store)).sort()).toEqual(["a", "b"]);
    const reads = vi.spyOn(fs, "readFile");
    try {
      expect(await byId(store)).toEqual({ a: summaryOf(a), b: summaryOf(b) });
      expect(reads).not.toHaveBeenCalled(); // unchanged since read: one stat each, no read, no schema check
    } finally {
      reads.mockRestore();
    }
    // Another process's store (a `brain run`, the CLI) writes the same files: its changes are seen, never stale.
    const other = new FsSessionStore(home);
    await other.update("a", { status: "closed" });
    await other.create({ ...base, id: "c" });
    expect((await byId(store)).a?.status).toBe("closed");
    expect((await store.get("a"))?.status).toBe("closed");
    expect(Object.keys(await byId(store)).sort()).toEqual(["a", "b", "c"]);
    await other.remove("b");
    expect(await store.get("b")).toBeUndefined();
    expect(Object.keys(await byId(store)).sort()).toEqual(["a", "c"]);
    // And this store's own changes.
    await store.update("c", { config: { model: "m2" } });
    await store.remove("a");
    const after = await byId(store);
    expect(Object.keys(after)).toEqual(["c"]);
    expect((await store.get("c"))?.config).toEqual({ model: "m2" });
    expect((await other.get("c"))?.config).toEqual({ model: "m2" });
    // One object shared by every caller: frozen, so no caller can change it for the others.
    expect(() => {
      (after.c as { status: string }).status = "closed";
    }).toThrow(TypeError);
  });

  it("updates a record, keeping id and created_at, and applies concurrent patches both", async () => {
    const record = await store.create({ ...base, id: "s1" });
    const [closed, configured] = await Promise.all([
      store.update("s1", { status: "closed" }),
      store.update("s1", { config: { model: "m2" } }),
    ]);
    expect(closed.status).toBe("closed");
    expect(configured).toEqual({ ...record, status: "closed", config: { model: "m2" } });
    expect(await store.get("s1")).toEqual(configured);
    await expect(store.update("s1", { id: "other", created_at: "x" } as never)).resolves.toMatchObject({
      id: "s1",
      created_at: record.created_at,
    });
    await expect(store.update("s1", { status: "gone" as never })).rejects.toThrow(/field "status"/);
    await expect(store.update("missing", { status: "closed" })).rejects.toThrow(/session missing not found/);
  });

  it("writes session.json atomically, leaving no temp files", async () => {
    await store.create({ ...base, id: "s1" });
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.update("s1", { config: { model: `m${i}` } })),
    );
    expect((await fs.readdir(store.paths("s1").dir)).sort()).toEqual([
      "checkpoints",
      "events.jsonl",
      "native",
      "session.json",
    ]);
    expect((await store.get("s1"))?.config.model).toBe("m9");
  });

  it("makes a new session durable with one sync of its directory and one of sessions/, none again to open its log", async () => {
    const synced: string[] = [];
    const io: LogIO = {
      ...nodeLogIO,
      syncDir: (dir) => {
        // The journal's directory is synced once per process, by its first commit: not a session's cost.
        if (dir.startsWith(path.join(home, "sessions"))) synced.push(dir);
        return nodeLogIO.syncDir(dir);
      },
    };
    const own = new FsSessionStore(home, io);
    await own.create({ ...base, id: "s1" });
    const { dir, events } = own.paths("s1");
    // The log's file is made with the rest, so the one sync of the session's directory covers its entry too.
    expect(synced.sort()).toEqual([own.root, dir].sort());
    const log = await own.openLog("s1");
    await log.append([{ type: "session.opened", data: { harness: "process", config: base.config } }]);
    await log.close();
    expect(synced).toHaveLength(2);
    // Any later open is an open like any other: the file it finds may not be one this store made durable.
    const again = await own.openLog("s1");
    await again.close();
    expect(synced).toEqual(expect.arrayContaining([dir]));
    expect(synced).toHaveLength(3);
    expect((await readEventsFile(events)).map((e) => e.type)).toEqual(["session.opened"]);
  });

  it("leaves nothing behind when a new session cannot be made durable", async () => {
    const io: LogIO = {
      ...nodeLogIO,
      syncDir: async () => {
        throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      },
    };
    const own = new FsSessionStore(home, io);
    await expect(own.create({ ...base, id: "s1" })).rejects.toThrow(/cannot create .*EIO/);
    expect(await fs.readdir(own.root)).toEqual([]);
  });

  it("removes a session and everything in it", async () => {
    await store.create({ ...base, id: "s1" });
    await fs.writeFile(path.join(store.paths("s1").native, "f"), "x");
    await store.remove("s1");
    expect(await store.get("s1")).toBeUndefined();
    await expect(fs.stat(store.paths("s1").dir)).rejects.toThrow(/ENOENT/);
    await store.remove("s1"); // already gone: fine
  });

  // Root's removals ignore permissions: only another user meets the read-only directory.
  it.skipIf(process.getuid?.() === 0)(
    "removes a session whose agent left read-only directories (Go's module cache), and nothing outside it",
    async () => {
      await store.create({ ...base, id: "s1" });
      const mod = path.join(store.paths("s1").native, "home", "go", "pkg", "mod", "example.com", "m@v1");
      await fs.mkdir(mod, { recursive: true });
      await fs.writeFile(path.join(mod, "go.mod"), "module m\n");
      // A read-only directory outside, linked from inside: left read-only.
      const outside = path.join(home, "outside");
      await fs.mkdir(outside);
      await fs.symlink(outside, path.join(mod, "..", "link"));
      await fs.chmod(outside, 0o555);
      await fs.chmod(mod, 0o555);
      await store.remove("s1");
      await expect(fs.stat(store.paths("s1").dir)).rejects.toThrow(/ENOENT/);
      expect((await fs.stat(outside)).mode & 0o777).toBe(0o555);
      await fs.chmod(outside, 0o755);
    },
  );

  it("opens the session's event log", async () => {
    await store.create({ ...base, id: "s1" });
    const log = await store.openLog("s1");
    await log.append([{ type: "user.prompt", data: { text: "hi" } }]);
    await log.close();
    expect(await readEventsFile(store.paths("s1").events)).toMatchObject([{ seq: 1, session: "s1" }]);
    await expect(store.openLog("s2")).rejects.toThrow(/not found/);
  });

  it.each(["../x", "", "a".repeat(65), "a/b", ".", "..", "a b", "é"])("rejects the bad id %j", async (id) => {
    expect(() => store.paths(id)).toThrow(StoreError);
    await expect(store.get(id)).rejects.toThrow(/bad session id/);
    await expect(store.create({ ...base, id })).rejects.toMatchObject({ code: "bad_request" });
    await expect(store.update(id, {})).rejects.toThrow(/bad session id/);
    await expect(store.remove(id)).rejects.toThrow(/bad session id/);
    expect(await fs.readdir(home)).toEqual([]);
  });

  it("accepts an id of 64 characters", async () => {
    const id = `${"a".repeat(63)}_`;
    expect((await store.create({ ...base, id })).id).toBe(id);
  });

  describe("a damaged session.json", () => {
    it("that is not JSON: an error naming the file", async () => {
      await store.create({ ...base, id: "s1" });
      const file = store.paths("s1").record;
      await fs.writeFile(file, "{not json");
      await expect(store.get("s1")).rejects.toThrow(`${file}: not valid JSON`);
      await expect(store.list()).rejects.toThrow(file);
    });

    it("that misses a field: an error naming the file and the field", async () => {
      const record = await store.create({ ...base, id: "s1" });
      const file = store.paths("s1").record;
      const { harness: _, ...rest } = record;
      await fs.writeFile(file, JSON.stringify(rest));
      await expect(store.get("s1")).rejects.toThrow(`${file}: field "harness": missing`);
    });

    it("that holds another session's id", async () => {
      const record = await store.create({ ...base, id: "s1" });
      await fs.writeFile(store.paths("s1").record, JSON.stringify({ ...record, id: "s2" }));
      await expect(store.get("s1")).rejects.toThrow(/field "id"/);
    });
  });

  it("retires a session's old segments and says where its log starts; a log that never rolled is left be", async () => {
    await store.create({ ...base, id: "s1" });
    await store.create({ ...base, id: "s2" });
    const log = await JsonlEventLog.open(store.paths("s1").events, "s1", undefined, { segmentBytes: 512 });
    for (let i = 0; i < 60; i++)
      await log.append([{ type: "user.prompt", turn: `t${i}`, data: { text: `prompt ${i}` } }]);
    await log.close();
    expect(await store.retire("s2", { dropAfterMs: 0 })).toBeUndefined();
    expect(await store.firstSeq("s1")).toBe(1);
    const result = await store.retire("s1", { dropAfterMs: 0 });
    expect(result).toMatchObject({ archived: 0 });
    expect(result!.dropped).toBeGreaterThan(0);
    expect(await store.firstSeq("s1")).toBe(result!.firstSeq);
    expect((await store.readEvents("s1"))[0]!.seq).toBe(result!.firstSeq);
    expect((await store.readEvents("s1")).at(-1)!.seq).toBe(60);
  });
});
