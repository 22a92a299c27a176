// A tenant's list of the embedded store looks only at its own sessions: another tenant's records, however many
// and however often they change, are neither stat'ed nor read again for it (counted on the store's real file
// reads), and the list is exactly the tenant's, damaged records included.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { UnreadableSession } from "../../core/store.js";
import { FsSessionStore } from "./session-store.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-tenant-list-"));
});

afterEach(async () => {
  vi.restoreAllMocks();
  await fs.rm(home, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };

/** Counts the stats and reads of session files whose directory `counted` names, while the store runs as ever. */
function countTouches(counted: (id: string) => boolean): () => number {
  let touches = 0;
  const seen = (file: unknown) => {
    const id = path.basename(path.dirname(String(file)));
    if (counted(id)) touches++;
  };
  const stat = fs.stat.bind(fs);
  const readFile = fs.readFile.bind(fs);
  vi.spyOn(fs, "stat").mockImplementation(((file: string, options: never) => {
    seen(file);
    return stat(file, options);
  }) as typeof fs.stat);
  vi.spyOn(fs, "readFile").mockImplementation(((file: string, options: never) => {
    seen(file);
    return readFile(file, options);
  }) as typeof fs.readFile);
  return () => touches;
}

describe("one tenant's list of the embedded store", () => {
  it("is exactly its sessions and looks at none of another tenant's, even as theirs change", async () => {
    const store = new FsSessionStore(home);
    const mine: string[] = [];
    const theirs = new Set<string>();
    for (let i = 0; i < 40; i++) {
      if (i % 10 === 3) mine.push((await store.create({ ...base, id: `a${i}`, tenant: "a" })).id);
      theirs.add((await store.create({ ...base, id: `b${i}`, tenant: "b" })).id);
    }
    // A second process on the same home (a `brain run`, the CLI) writes b's records: each file changes.
    const other = new FsSessionStore(home);
    expect((await store.list(undefined, "a")).map((s) => s.id)).toEqual(mine);
    for (const id of theirs) await other.update(id, { status: "closed" });
    const touches = countTouches((id) => theirs.has(id));
    expect((await store.list(undefined, "a")).map((s) => s.id)).toEqual(mine);
    expect(touches()).toBe(0);
    // b's own list sees every change, and the default tenant (none named) has none of them.
    const listed = await store.list(undefined, "b");
    expect(touches()).toBeGreaterThanOrEqual(theirs.size); // the count sees b's reads where there are some
    expect(listed.map((s) => s.id).sort()).toEqual([...theirs].sort());
    expect(listed.every((s) => s.status === "closed")).toBe(true);
    expect(await store.list(undefined, "default")).toEqual([]);
    expect((await store.list()).length).toBe(mine.length + theirs.size);
  });

  it("tells a damaged record to its tenant's list alone, and does not fail another tenant's", async () => {
    const store = new FsSessionStore(home);
    await store.create({ ...base, id: "a1", tenant: "a" });
    const b1 = await store.create({ ...base, id: "b1", tenant: "b" });
    await fs.writeFile(store.paths("b1").record, JSON.stringify({ ...b1, harness: 7 }));
    // No `unreadable`: a's list does not throw for b's record; b's does, as a list of all does.
    expect((await store.list(undefined, "a")).map((s) => s.id)).toEqual(["a1"]);
    await expect(store.list(undefined, "b")).rejects.toThrow(/b1/);
    const told: UnreadableSession[] = [];
    expect(await store.list((s) => told.push(s), "a")).toHaveLength(1);
    expect(told).toEqual([]);
    expect(await store.list((s) => told.push(s), "b")).toEqual([]);
    expect(told.map((s) => [s.id, s.tenant])).toEqual([["b1", "b"]]);
  });

  it("lists a session made again under another tenant's name by its new tenant alone", async () => {
    const store = new FsSessionStore(home);
    await store.create({ ...base, id: "x1", tenant: "a" });
    expect((await store.list(undefined, "a")).map((s) => s.id)).toEqual(["x1"]);
    await store.remove("x1");
    await store.create({ ...base, id: "x1", tenant: "b" });
    expect(await store.list(undefined, "a")).toEqual([]);
    expect((await store.list(undefined, "b")).map((s) => s.id)).toEqual(["x1"]);
  });
});
