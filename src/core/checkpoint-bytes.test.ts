// What CheckpointBytes counts of a session's checkpoints is what the embedded store's files hold: each manifest,
// and each blob once, however many checkpoints share it; a checkpoint made since is added to the count.
import { appendFile, mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointBytes } from "./checkpoint-bytes.js";
import { CheckpointStore } from "./checkpoints/index.js";
import { dirBytes, native, put, tempDirs } from "./checkpoints/testing.js";

const temp = tempDirs();
afterEach(() => temp.cleanup());

describe("CheckpointBytes", () => {
  it("counts the bytes of the checkpoints' files: manifests, and shared blobs once", async () => {
    const base = await temp.make();
    const nativeDir = path.join(base, "native");
    await mkdir(nativeDir);
    const store = new CheckpointStore(path.join(base, "checkpoints"));
    // The files' sizes: the manifests beside the blobs directory, and the blobs in it.
    const onDisk = async () =>
      (await dirBytes(store.dir)) - (await stat(store.blobsDir)).size + (await dirBytes(store.blobsDir));
    const counts = new CheckpointBytes();
    expect(await counts.of("s", store)).toEqual({ bytes: 0, count: 0 });

    await put(nativeDir, "same.json", "x".repeat(5000));
    await put(nativeDir, "log.jsonl", "line\n".repeat(1000));
    const files = async () => [
      await native(nativeDir, "same.json"),
      await native(nativeDir, "log.jsonl", true),
    ];
    await store.create(nativeDir, await files());
    expect(await counts.of("s", store)).toEqual({ bytes: await onDisk(), count: 1 });
    // Nothing changed: a manifest more, no blob. Then the append-only file grows: its new bytes are one blob.
    await store.create(nativeDir, await files());
    await appendFile(path.join(nativeDir, "log.jsonl"), "more\n".repeat(500));
    await store.create(nativeDir, await files());
    expect(await counts.of("s", store)).toEqual({ bytes: await onDisk(), count: 3 });
    // Counted again from none, as a restarted host does, it is the same.
    expect(await new CheckpointBytes().of("s", store)).toEqual({ bytes: await onDisk(), count: 3 });
  });
});
