// A session.json written by a newer node (a rolling upgrade, or a $BRAIN_HOME shared with a newer `brain`) holds
// fields this version does not know: it is read, not taken as damaged, and an update here writes them back, so the
// newer node does not find its field dropped. A field of how the session runs that it does not know is refused by
// name, as a newer version's.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FsSessionStore } from "./session-store.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-home-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };

async function stored(store: FsSessionStore, id: string): Promise<Record<string, unknown>> {
  return JSON.parse(await fs.readFile(store.paths(id).record, "utf8"));
}

async function written(store: FsSessionStore, id: string, value: object): Promise<void> {
  await fs.writeFile(store.paths(id).record, `${JSON.stringify(value, null, 2)}\n`);
}

describe("a session record with fields a newer version wrote", () => {
  it("is read without them, and an update keeps them as they were", async () => {
    const store = new FsSessionStore(home);
    const { id } = await store.create({
      ...base,
      tenant: "a",
      forked_from: { session: "p", checkpoint: "000001" },
    });
    const newer = {
      ...(await stored(store, id)),
      future: { kept: [1, 2] },
      forked_from: { session: "p", checkpoint: "000001", at_seq: 9 },
    };
    await written(store, id, newer);
    const read = await store.get(id);
    expect(read?.tenant).toBe("a");
    expect(read).not.toHaveProperty("future");
    expect(read?.forked_from).toEqual({ session: "p", checkpoint: "000001" });
    expect((await store.list()).map((s) => s.id)).toEqual([id]);

    const updated = await store.update(id, { status: "closed" });
    expect(updated).not.toHaveProperty("future");
    expect(await stored(store, id)).toEqual({ ...newer, status: "closed" });
    // A patch of a field replaces it whole; what else the record holds stays.
    await store.update(id, { forked_from: { session: "q", checkpoint: "000002" } });
    expect(await stored(store, id)).toEqual({
      ...newer,
      status: "closed",
      forked_from: { session: "q", checkpoint: "000002" },
    });
  });

  it("is refused, naming the field, when its config has a setting this version does not know", async () => {
    const store = new FsSessionStore(home);
    const { id } = await store.create(base);
    await written(store, id, { ...(await stored(store, id)), config: { model: "m1", warp: 9 } });
    await expect(store.get(id)).rejects.toThrow(/field "config": Unrecognized key: "warp".*newer version/);
  });
});
