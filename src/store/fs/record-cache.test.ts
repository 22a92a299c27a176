import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runInSmallHeap } from "../../testing/small-heap.js";
import { FsSessionStore } from "./session-store.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-records-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

const large = (n: number) => ({ harness: "process", config: { system_prompt: "x".repeat(n) } });

describe("the records a store keeps in memory", () => {
  it("stay bounded by bytes however large the records: lists and reads of 1 MiB records in a 48 MiB heap", async () => {
    // 64 sessions of 1 MiB config each: a tenant within its limits, in small (4 MiB configs, 10,000 sessions). A
    // daemon that kept every record it read, or listed them whole, would hold them all.
    const store = new FsSessionStore(home);
    for (let i = 0; i < 64; i++) await store.create({ ...large(1 << 20), id: `s${i}`, tenant: "t" });
    const module = pathToFileURL(
      path.join(import.meta.dirname, "../../../dist/src/store/fs/session-store.js"),
    ).href;
    const script = `const { FsSessionStore } = await import(${JSON.stringify(module)});
      const store = new FsSessionStore(${JSON.stringify(home)});
      let read = 0;
      for (let round = 0; round < 3; round++) {
        const listed = await store.list();
        for (const { id } of listed) read += (await store.get(id)).config.system_prompt.length;
      }
      process.stdout.write(JSON.stringify({ listed: (await store.list()).map((s) => s.id).length, read }));`;
    const stdout = runInSmallHeap(script, 48);
    expect(JSON.parse(stdout)).toEqual({ listed: 64, read: 3 * 64 * (1 << 20) });
  });

  it("reads a large record again on each use, keeps a small one, and serves neither stale", async () => {
    const store = new FsSessionStore(home);
    const small = await store.create({ ...large(10), id: "small" });
    const big = await store.create({ ...large(1 << 20), id: "big" });
    expect(await store.get("small")).toEqual(small);
    expect(await store.get("big")).toEqual(big);
    const reads = vi.spyOn(fs, "readFile");
    try {
      expect(await store.get("small")).toEqual(small);
      expect(await store.get("big")).toEqual(big);
      expect(reads.mock.calls.map(([file]) => path.basename(path.dirname(String(file))))).toEqual(["big"]);
      reads.mockClear();
      // A list of unchanged records reads none: their summaries are kept, large or small.
      expect((await store.list()).map((s) => [s.id, s.harness, s.status])).toEqual([
        ["small", "process", "open"],
        ["big", "process", "open"],
      ]);
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
    // Another process's store writes both: each is read again, never served from what was kept.
    const other = new FsSessionStore(home);
    await other.update("small", { status: "closed" });
    await other.update("big", { status: "closed" });
    expect((await store.list()).map((s) => s.status)).toEqual(["closed", "closed"]);
    expect((await store.get("small"))?.status).toBe("closed");
    expect((await store.get("big"))?.status).toBe("closed");
  });
});
