// What a process killed mid-checkpoint or mid-restore leaves (a blob or manifest being written, a restore's staging
// dir) is removed by the next checkpoint or restore there; what a live process is writing is not.
import { randomUUID } from "node:crypto";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointStore } from "./index.js";
import { tempName } from "./temps.js";
import { killedPid, native, put, tempDirs } from "./testing.js";

const temp = tempDirs();
afterEach(temp.cleanup);

/** A temp named as the killed process `pid` would have named it. */
const leftBy = (pid: number, kind: "tmp" | "restoring") => `${kind}-${pid}-00000000-${randomUUID()}`;

describe("temps left by a killed writer", () => {
  it("are removed by the next checkpoint, and a live writer's are kept", async () => {
    const base = await temp.make();
    const nativeDir = path.join(base, "native");
    const dir = path.join(base, "checkpoints");
    await put(nativeDir, "state.json", "{}");
    const first = await new CheckpointStore(dir).create(nativeDir, [await native(nativeDir, "state.json")]);
    const dead = await killedPid();
    const blobs = path.join(dir, "blobs");
    const deadBlob = `.${leftBy(dead, "tmp")}`;
    const deadManifest = `000002.json.${leftBy(dead, "tmp")}`;
    const liveBlob = `.${tempName("tmp")}`;
    for (const file of [path.join(blobs, deadBlob), path.join(dir, deadManifest), path.join(blobs, liveBlob)])
      await writeFile(file, "half written");

    await put(nativeDir, "state.json", '{"turns":2}');
    const store = new CheckpointStore(dir);
    const second = await store.create(nativeDir, [await native(nativeDir, "state.json")]);
    const sha = (m: typeof first) => m.files[0]!.segments[0]!.blob;
    expect((await readdir(blobs)).sort()).toEqual([liveBlob, sha(first), sha(second)].sort());
    expect((await readdir(dir)).sort()).toEqual(["000001.json", "000002.json", "blobs"]);
  });

  it("are removed by the next restore into the same target, and nothing else beside it", async () => {
    const base = await temp.make();
    const nativeDir = path.join(base, "native");
    await put(nativeDir, "state.json", "{}");
    const store = new CheckpointStore(path.join(base, "checkpoints"));
    const manifest = await store.create(nativeDir, [await native(nativeDir, "state.json")]);
    const out = path.join(base, "out");
    const dead = await killedPid();
    const deadStaging = `.restored.${leftBy(dead, "restoring")}`;
    const liveStaging = `.restored.${tempName("restoring")}`;
    const otherTarget = `.other.${leftBy(dead, "restoring")}`;
    for (const name of [deadStaging, liveStaging, otherTarget]) {
      await mkdir(path.join(out, name), { recursive: true });
      await writeFile(path.join(out, name, "state.json"), "{");
    }

    await store.restore(manifest.id, path.join(out, "restored"));
    expect((await readdir(out)).sort()).toEqual([liveStaging, otherTarget, "restored"].sort());
  });
});
