// Retention on a real Brain with the echo runner: closed, idle sessions are compacted once; open ones never;
// one asked for during its compaction opens after it, with every kept event intact.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../cli/config.js";
import { startDaemon } from "../server/daemon.js";
import { acquireLogLock } from "../store/fs/log-lock.js";
import { makeBrain, type TestBrain } from "../testing/brain.js";

let t: TestBrain;
beforeEach(() => {
  t = makeBrain();
});
afterEach(() => t.cleanup());

async function finishedSession(text: string): Promise<string> {
  const session = await t.brain.create({ harness: "echo" });
  await (await session.prompt(text)).settled;
  return session.id;
}

const deltas = async (id: string) => (await t.brain.events(id)).filter((e) => e.type === "assistant.delta");

describe("retention", () => {
  it("compacts closed idle sessions once, and never an open one", async () => {
    const id = await finishedSession("hello there, a few words to stream");
    expect((await deltas(id)).length).toBeGreaterThan(0);
    expect(await t.brain.compactIdle(0)).toEqual([]); // still open in this process
    await t.brain.closeSession(id);
    expect(await t.brain.compactIdle(60 * 60_000)).toEqual([]); // not idle long enough
    const [done] = await t.brain.compactIdle(0);
    expect(done).toMatchObject({ id, result: { turns: 1 } });
    expect(await deltas(id)).toEqual([]);
    const message = (await t.brain.events(id)).find((e) => e.type === "assistant.message");
    expect(message?.data).toMatchObject({ text: expect.stringContaining("hello there") });
    expect(await t.brain.compactIdle(0)).toEqual([]); // unchanged since: only stat'ed
  });

  it("opens a session asked for during its compaction after it, with the log whole", async () => {
    const id = await finishedSession("one two three four five");
    await t.brain.closeSession(id);
    const before = (await t.brain.events(id)).filter((e) => e.type !== "assistant.delta");
    // Ask for the session once the compaction has begun.
    const compact = t.store.compact.bind(t.store);
    let begun = () => {};
    const started = new Promise<void>((resolve) => {
      begun = resolve;
    });
    t.store.compact = (sid, options) => {
      const running = compact(sid, options);
      begun();
      return running;
    };
    const sweep = t.brain.compactIdle(0);
    await started;
    const session = await t.brain.session(id);
    expect((await sweep).map((d) => d.id)).toEqual([id]);
    expect(await session.log.read(0)).toEqual(before);
    await (await session.prompt("again")).settled;
    expect((await session.log.read(0)).filter((e) => e.type === "turn.settled")).toHaveLength(2);
  });

  it("opens a session under a tenant bound while a sweep starts, without the sweep taking its log's lock", async () => {
    const first = t; // a Brain of its own over the same store: this one bounds each tenant's open sessions
    t = makeBrain({ home: first.home, openSessionsPerTenant: 8 });
    try {
      const id = await finishedSession("one two three four five");
      await t.brain.closeSession(id);
      // A sweep that starts while the open reads the session's tenant, its compaction holding the log's lock a while.
      const [get, compact] = [t.store.get.bind(t.store), t.store.compact.bind(t.store)];
      let [begun, release] = [() => {}, () => {}];
      const started = new Promise<void>((resolve) => {
        begun = resolve;
      });
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      t.store.compact = async (sid, options) => {
        const lock = await acquireLogLock(t.store.paths(sid).events, { session: sid });
        begun();
        await held;
        await lock.release();
        return compact(sid, options);
      };
      let sweep: Promise<unknown> | undefined;
      t.store.get = async (sid) => {
        if (sid === id && !sweep) {
          sweep = t.brain.compactIdle(0);
          await Promise.race([started, sweep]);
        }
        return get(sid);
      };
      const opened = t.brain.session(id).then(
        (session) => session.id,
        (err: Error) => err.message,
      );
      const result = await opened; // the sweep's lock held meanwhile, if it took it
      release();
      expect(result).toBe(id);
      await sweep;
    } finally {
      await t.brain.close();
      t = first;
    }
  });

  it("deletes a session asked to be deleted during its compaction once the compaction ends", async () => {
    const id = await finishedSession("one two three four five");
    await t.brain.closeSession(id);
    const compact = t.store.compact.bind(t.store);
    let begun = () => {};
    const started = new Promise<void>((resolve) => {
      begun = resolve;
    });
    t.store.compact = (sid, options) => {
      const running = compact(sid, options);
      begun();
      return running;
    };
    const sweep = t.brain.compactIdle(0);
    await started;
    await t.brain.delete(id);
    expect((await sweep).map((d) => d.id)).toEqual([id]);
    expect(await t.store.get(id)).toBeUndefined();
    expect(existsSync(t.store.paths(id).dir)).toBe(false);
  });

  it("skips a session with a turn still open and looks again only when its log changes", async () => {
    const id = await finishedSession("first");
    await t.brain.closeSession(id);
    // A turn the host died in: its log ends with the turn open.
    const { JsonlEventLog } = await import("../store/fs/jsonl-log.js");
    const log = await JsonlEventLog.open(t.store.paths(id).events, id);
    await log.append([
      { type: "user.prompt", turn: "t-open", data: { text: "x" } },
      { type: "turn.started", turn: "t-open", data: {} },
    ]);
    await log.close();
    expect(await t.brain.compactIdle(0)).toEqual([]);
    expect(await deltas(id)).not.toEqual([]);
  });

  it("runs in the daemon by its config setting, which is checked", async () => {
    const file = join(t.home, "brain.config.json");
    writeFileSync(file, JSON.stringify({ retention: { compact_after_minutes: 0 } }));
    expect(() => loadConfig(file, t.home)).toThrow(/retention\.compact_after_minutes/);
    writeFileSync(file, JSON.stringify({ retention: { compact_after_minutes: 5 } }));
    expect(loadConfig(file, t.home).config.retention).toEqual({ compact_after_minutes: 5 });

    const id = await finishedSession("the daemon compacts this");
    await t.brain.closeSession(id);
    const daemon = await startDaemon({ brain: t.brain, port: 0, retention: { compactAfterMs: 0 } });
    try {
      while ((await deltas(id)).length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await daemon.close();
    }
  });

  it("checks the segment settings, naming the field", async () => {
    const file = join(t.home, "brain.config.json");
    for (const [retention, field] of [
      [
        { archive_segments_after_minutes: 60, drop_segments_after_minutes: 30 },
        /retention\.drop_segments_after_minutes/,
      ],
      [{ max_log_mb: "big" }, /retention\.max_log_mb/],
      [{ drop_segments_after_minutes: -1 }, /retention\.drop_segments_after_minutes/],
      [{}, /retention.*set at least one of/],
    ] as const) {
      writeFileSync(file, JSON.stringify({ retention }));
      expect(() => loadConfig(file, t.home)).toThrow(field);
    }
    const good = { archive_segments_after_minutes: 60, drop_segments_after_minutes: 600, max_log_mb: 64 };
    writeFileSync(file, JSON.stringify({ retention: good }));
    expect(loadConfig(file, t.home).config.retention).toEqual(good);
  });

  it("retires the segments of closed sessions, never of one open here or one forked or handed off from", async () => {
    const parent = await finishedSession("a parent");
    const lone = await finishedSession("on its own");
    const open = await finishedSession("still open");
    await t.brain.closeSession(parent);
    await t.brain.closeSession(lone);
    await t.store.create({ harness: "echo", config: {}, forked_from: { session: parent, checkpoint: "c1" } });
    const asked: string[] = [];
    t.store.retire = async (id) => {
      asked.push(id);
      return { archived: 0, dropped: 1, bytesFreed: 1, firstSeq: 2 };
    };
    const done = await t.brain.retireIdle({ dropAfterMs: 0 });
    expect(asked).toContain(lone);
    expect(asked).not.toContain(parent);
    expect(asked).not.toContain(open);
    expect(done.map((d) => d.id)).toEqual(asked);
  });

  it("keeps no segment for a fork whose deleted parent's id a newer session took", async () => {
    const parent = await t.brain.create({ harness: "echo", id: "parent-x" });
    await (await parent.prompt("the old plan")).settled;
    await t.brain.fork("parent-x", (await parent.checkpoint()).id);
    await t.brain.delete("parent-x");
    await finishedSession("filler");
    const stranger = await t.brain.create({ harness: "echo", id: "parent-x" });
    await (await stranger.prompt("another conversation")).settled;
    await t.brain.closeSession("parent-x");
    const asked: string[] = [];
    t.store.retire = async (id) => {
      asked.push(id);
      return undefined;
    };
    await t.brain.retireIdle({ dropAfterMs: 0 });
    expect(asked).toContain("parent-x");
  });

  it("holds back no session's segments for a record that is not JSON (its age unknown), and says so once", async () => {
    const older = await finishedSession("made before the damaged one");
    const damaged = await finishedSession("its record is not JSON");
    for (const id of [older, damaged]) await t.brain.closeSession(id);
    const file = join(t.home, "sessions", damaged, "session.json");
    writeFileSync(file, "{not json");
    const asked: string[] = [];
    t.store.retire = async (id) => {
      asked.push(id);
      return undefined;
    };
    const warnings: string[] = [];
    await t.brain.retireIdle({ dropAfterMs: 0 }, (message) => warnings.push(message));
    await t.brain.retireIdle({ dropAfterMs: 0 }, (message) => warnings.push(message));
    expect(asked).toEqual([older, older]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(file);
  });

  it("sweeps past a record that cannot be read, keeping the segments of the sessions it may be a fork of", async () => {
    const older = await finishedSession("made before the damaged one");
    const damaged = await finishedSession("its record is damaged");
    const newer = await finishedSession("made after it");
    for (const id of [older, damaged, newer]) await t.brain.closeSession(id);
    const file = join(t.home, "sessions", damaged, "session.json");
    // Parses, but is no record: it still says when it was made.
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), harness: 7 }));
    expect((await t.brain.compactIdle(0)).map((d) => d.id).sort()).toEqual([older, newer].sort());
    const asked: string[] = [];
    t.store.retire = async (id) => {
      asked.push(id);
      return undefined;
    };
    await t.brain.retireIdle({ dropAfterMs: 0 });
    expect(asked).toEqual([newer]);
  });
});
