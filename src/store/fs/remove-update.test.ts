// A session's removal and a write of its record at once (a delete racing its session's close, which records it
// closed): the record's temp file, made in the directory while rm walks it, failed the rm (ENOTEMPTY) or was
// renamed into a directory left half removed, so a delete failed or left the session behind.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { FsSessionStore } from "./session-store.js";

let home: string;
let store: FsSessionStore;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-remove-update-"));
  store = new FsSessionStore(home);
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

it("removes a session whose record is being written at the same moment, every time", async () => {
  const failures: string[] = [];
  for (let i = 0; i < 150; i++) {
    const { id } = await store.create({ harness: "echo", config: {} });
    // Each record write a turn further on than the last, so the remove meets it at another point of its write.
    const update = (async () => {
      for (let k = 0; k < i % 5; k++) await Promise.resolve();
      await store.update(id, { status: "closed" });
    })().catch(() => undefined);
    const removed = await store.remove(id).then(
      () => undefined,
      (err: Error) => err.message,
    );
    await update;
    if (removed) failures.push(removed);
    else if (await store.get(id)) failures.push(`${id} still stored after its remove`);
  }
  expect(failures).toEqual([]);
});
