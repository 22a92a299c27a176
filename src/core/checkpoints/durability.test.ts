import { execFileSync, spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointStore } from "./index.js";
import { fsyncDir } from "./io.js";
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

  // A restore's directories are the caller's, anywhere (a network mount that stalls): their opens stay off the
  // loop's thread. A FIFO stands in for a stalled one: its open for reading waits until a writer opens it.
  it("opens a directory of the caller's on the thread pool, so one that hangs leaves the loop running", async () => {
    const fifo = path.join(await tempDir(), "stalled");
    execFileSync("mkfifo", [fifo]);
    // Opens the FIFO for writing once told to on its stdin, which only a running loop can do (or, untold, after
    // 60 s, so that a blocked loop ends too), and says which.
    const script = 'if read -r -t 60 _; then echo told; else echo untold; fi; exec 3>"$1"; cat >/dev/null';
    const writer = spawn("bash", ["-c", script, "bash", fifo], { stdio: ["pipe", "pipe", "inherit"] });
    const said = new Promise<string>((resolve) =>
      writer.stdout.once("data", (d) => resolve(String(d).trim())),
    );
    const synced = fsyncDir(fifo, true);
    writer.stdin.write("go\n");
    expect(await said).toBe("told");
    await synced;
    writer.stdin.end();
  }, 120_000);
});
