import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointStore } from "./index.js";
import { native, put, tempDirs } from "./testing.js";

const temp = tempDirs();
const tempDir = temp.make;
afterEach(() => temp.cleanup());

// What a checkpoint leaves on disk when it fails or is cut off between its blobs and its manifest.
describe("CheckpointStore durability order", () => {
  // The manifest is written while its blobs are (they overlap), but named only once every blob is durable: a crash
  // in between leaves a temp, never a checkpoint pointing at a blob that is not there.
  it("names the manifest only after its blobs are stored", async () => {
    const base = await tempDir();
    const nativeDir = path.join(base, "native");
    await put(nativeDir, "a.txt", "alpha");
    const seen: string[][] = [];
    const store = new CheckpointStore(path.join(base, "checkpoints"), {
      hooks: {
        async beforeBlobCommit() {
          await new Promise((resolve) => setTimeout(resolve, 50));
          seen.push(await store.list());
        },
      },
    });
    expect((await store.create(nativeDir, [await native(nativeDir, "a.txt")])).id).toBe("000001");
    expect(seen).toEqual([[]]);
    expect(await store.list()).toEqual(["000001"]);
  });

  it("writes no manifest when storing a blob fails", async () => {
    const base = await tempDir();
    const nativeDir = path.join(base, "native");
    await put(nativeDir, "a.txt", "alpha");
    await put(nativeDir, "b.txt", "beta");
    let fail = false;
    const store = new CheckpointStore(path.join(base, "checkpoints"), {
      hooks: {
        beforeBlobCommit() {
          if (fail) throw new Error("disk full (injected)");
        },
      },
    });
    const files = async () => [await native(nativeDir, "a.txt"), await native(nativeDir, "b.txt")];
    await store.create(nativeDir, await files());
    await put(nativeDir, "b.txt", "beta, changed");
    fail = true;
    await expect(store.create(nativeDir, await files())).rejects.toThrow(/injected/);
    expect(await store.list()).toEqual(["000001"]);
    expect((await readdir(store.dir)).filter((n) => n.includes("tmp"))).toEqual([]);
    expect((await readdir(store.blobsDir)).filter((n) => n.startsWith("."))).toEqual([]);

    fail = false;
    expect((await store.create(nativeDir, await files())).id).toBe("000002");
  });
});
