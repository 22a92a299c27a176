import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import {
  appendFile,
  chmod,
  mkdir,
  open,
  readdir,
  readFile,
  stat,
  symlink,
  truncate,
  unlink,
  writeFile,
} from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canMount, smallDisk } from "../../testing/small-disk.js";
import { CheckpointError, CheckpointStore } from "./index.js";
import { dirBytes, native, put, read, tempDirs } from "./testing.js";

const temp = tempDirs();
const tempDir = temp.make;
const unmounts: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const unmount of unmounts.splice(0)) await unmount();
  await temp.cleanup();
});
const mountable = canMount();

async function setup() {
  const base = await tempDir();
  const nativeDir = path.join(base, "native");
  await mkdir(nativeDir);
  return { base, nativeDir, store: new CheckpointStore(path.join(base, "checkpoints")) };
}

describe("CheckpointStore round trip", () => {
  it("restores every file byte for byte into a fresh dir elsewhere", async () => {
    const { base, nativeDir, store } = await setup();
    const contents: Record<string, Buffer> = {
      "session.jsonl": Buffer.from('{"role":"user","text":"hi"}\n'),
      "deep/nested/dir/state.bin": randomBytes(70_000),
      "deep/empty.txt": Buffer.alloc(0),
      "meta.json": Buffer.from('{"model":"m"}'),
    };
    for (const [rel, data] of Object.entries(contents)) await put(nativeDir, rel, data);
    const files = [
      await native(nativeDir, "session.jsonl", true),
      await native(nativeDir, "deep/nested/dir/state.bin"),
      await native(nativeDir, "deep/empty.txt"),
      await native(nativeDir, "meta.json"),
    ];
    const manifest = await store.create(nativeDir, files, {
      secrets: [{ name: "TEST_KEY", value: "sk-test-secret" }],
    });
    expect(manifest.id).toBe("000001");
    expect(await store.list()).toEqual(["000001"]);
    expect(await store.get("latest")).toEqual(manifest);
    expect(await store.nativeFiles("000001")).toEqual(files);

    const into = path.join(base, "elsewhere", "restored");
    await store.restore("latest", into);
    for (const [rel, data] of Object.entries(contents))
      expect((await read(into, rel)).equals(data)).toBe(true);
    expect((await readdir(path.dirname(into))).sort()).toEqual(["restored"]);
  });

  it("restores each file no more readable than it was (files from old manifests: owner only)", async () => {
    const { base, nativeDir, store } = await setup();
    await put(nativeDir, "private.json", "{}");
    await put(nativeDir, "shared.txt", "hello");
    await chmod(path.join(nativeDir, "private.json"), 0o600);
    await chmod(path.join(nativeDir, "shared.txt"), 0o640);
    const files = [await native(nativeDir, "private.json"), await native(nativeDir, "shared.txt")];
    const manifest = await store.create(nativeDir, files);
    const into = path.join(base, "restored");
    await store.restore(manifest.id, into);
    const mode = async (rel: string) => (await stat(path.join(into, rel))).mode & 0o777;
    expect(await mode("private.json")).toBe(0o600);
    expect((await mode("shared.txt")) & ~0o640).toBe(0);
    // A manifest written before modes were kept restores owner-only.
    const file = path.join(base, "checkpoints", `${manifest.id}.json`);
    const old = JSON.parse(await readFile(file, "utf8")) as { files: { mode?: number }[] };
    for (const f of old.files) delete f.mode;
    await writeFile(file, JSON.stringify(old));
    const again = path.join(base, "restored-old");
    await store.restore(manifest.id, again);
    expect((await stat(path.join(again, "shared.txt"))).mode & 0o777).toBe(0o600);
  });

  it.each([
    [["a.txt", "a.txt"], /files\[1\]: "a\.txt" is already a file of the manifest/],
    [["a.txt", "a.txt/b"], /files\[1\]: "a\.txt" is a file of the manifest, not a directory/],
    [["a.txt/b", "a.txt"], /files\[1\]: "a\.txt" is already a directory of the manifest/],
  ])(
    "refuses a manifest naming %j (one file twice, or a file as a directory), writing nothing",
    async (paths, rule) => {
      const { base, nativeDir, store } = await setup();
      await put(nativeDir, "a.txt", "alpha");
      const made = await store.create(nativeDir, [await native(nativeDir, "a.txt")]);
      const file = path.join(base, "checkpoints", `${made.id}.json`);
      const one = made.files[0]!;
      await writeFile(file, JSON.stringify({ ...made, files: paths.map((p) => ({ ...one, path: p })) }));
      const into = path.join(base, "restored");
      const err = await store.restore(made.id, into).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CheckpointError);
      expect((err as Error).message).toMatch(rule);
      expect(readdirSync(base).sort()).toEqual(["checkpoints", "native"]);
    },
  );

  it("restores into an existing empty dir, and refuses a non-empty one", async () => {
    const { base, nativeDir, store } = await setup();
    await put(nativeDir, "a.txt", "alpha");
    await store.create(nativeDir, [await native(nativeDir, "a.txt")]);
    const empty = path.join(base, "empty");
    await mkdir(empty);
    await store.restore("000001", empty);
    expect((await read(empty, "a.txt")).toString()).toBe("alpha");

    const err = await store.restore("000001", empty).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointError);
    expect((err as Error).message).toMatch(/not empty/);
    // The target is the caller's `into`, not the checkpoint.
    expect((err as CheckpointError).field).toBe("into");
    const file = path.join(base, "a-file");
    await writeFile(file, "x");
    const dangling = path.join(base, "dangling");
    await symlink(path.join(base, "nowhere"), dangling);
    await expect(store.restore("000001", path.join(dangling, "a", "b"))).rejects.toThrow(
      /dangling is not a directory/,
    );
    for (const into of [file, path.join(file, "below")]) {
      const refused = await store.restore("000001", into).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "bad_request", field: "into" });
    }
    await expect(store.restore("000001", path.join(file, "below"))).rejects.toThrow(
      /a-file is not a directory/,
    );
    // Node throws on a NUL byte before any system call: still the caller's `into`, not a host failure.
    await expect(store.restore("000001", path.join(base, "x\0y"))).rejects.toMatchObject({
      code: "bad_request",
      field: "into",
      message: expect.stringMatching(/contains a NUL byte/),
    });
  });

  // procfs answers ENOENT to a mkdir below a directory it has: Node's recursive mkdir then makes the parent again
  // and retries, forever, on one of libuv's four threadpool threads; a missing level below it must not hang.
  it.skipIf(!existsSync("/proc/self"))(
    "refuses a target procfs cannot make, a level deeper too",
    async () => {
      const { nativeDir, store } = await setup();
      await put(nativeDir, "a.txt", "alpha");
      await store.create(nativeDir, [await native(nativeDir, "a.txt")]);
      for (const into of ["/proc/self/restored", "/proc/self/missing/restored", "/proc/missing/a/b"]) {
        await expect(store.restore("000001", into), into).rejects.toMatchObject({
          code: "bad_request",
          field: "into",
          message: expect.stringMatching(/file system does not create directories there/),
        });
      }
    },
  );

  it("names the known ids for an unknown one", async () => {
    const { nativeDir, store } = await setup();
    await expect(store.get("latest")).rejects.toThrow(/none yet/);
    await put(nativeDir, "a.txt", "alpha");
    await store.create(nativeDir, [await native(nativeDir, "a.txt")]);
    await store.create(nativeDir, [await native(nativeDir, "a.txt")]);
    await expect(store.get("000009")).rejects.toThrow(/known: 000001, 000002/);
    await expect(store.get("../x")).rejects.toThrow(CheckpointError);
  });
});

describe("incremental storage", () => {
  it("stores only the bytes appended since the previous checkpoint", async () => {
    const { base, nativeDir, store } = await setup();
    const first = randomBytes(8 << 20);
    await put(nativeDir, "log.jsonl", first);
    await put(nativeDir, "config.json", '{"unchanged":true}');
    const list = async () => [
      await native(nativeDir, "log.jsonl", true),
      await native(nativeDir, "config.json"),
    ];
    await store.create(nativeDir, await list());
    const before = await dirBytes(store.blobsDir);
    expect(before).toBe(first.length + 18);

    const added = randomBytes(1024);
    await appendFile(path.join(nativeDir, "log.jsonl"), added);
    const second = await store.create(nativeDir, await list());
    expect((await dirBytes(store.blobsDir)) - before).toBe(1024);
    expect(second.files[0]?.segments.map((s) => [s.offset, s.length])).toEqual([
      [0, first.length],
      [first.length, 1024],
    ]);

    await store.restore("000002", path.join(base, "r2"));
    expect((await read(path.join(base, "r2"), "log.jsonl")).equals(Buffer.concat([first, added]))).toBe(true);
    await store.restore("000001", path.join(base, "r1"));
    expect((await read(path.join(base, "r1"), "log.jsonl")).equals(first)).toBe(true);
  });

  it("stores nothing new when nothing changed", async () => {
    const { nativeDir, store } = await setup();
    await put(nativeDir, "log.jsonl", "line\n");
    await put(nativeDir, "state.json", "{}");
    const files = [await native(nativeDir, "log.jsonl", true), await native(nativeDir, "state.json")];
    await store.create(nativeDir, files);
    const before = await dirBytes(store.blobsDir);
    await store.create(nativeDir, files);
    expect(await dirBytes(store.blobsDir)).toBe(before);
  });
});

describe("sparse files", () => {
  it("stores and restores a sparse file's holes as holes: no more disk than it took where it was", async () => {
    // What an agent makes with `truncate -s`: a file of any size that costs it no disk. Stored byte for byte, a
    // checkpoint (and each fork's restore) would fill the daemon's disk for every tenant.
    const { base, nativeDir, store } = await setup();
    const size = 64 << 20;
    const file = path.join(nativeDir, "big.jsonl");
    await writeFile(file, "start\n");
    await truncate(file, size);
    const fh = await open(file, "r+");
    await fh.write("middle\n", size / 2 + 1, "utf8");
    await fh.close();
    const allocated = async (p: string) => (await stat(p)).blocks * 512;
    const budget = (await allocated(file)) + (64 << 10);
    const manifest = await store.create(nativeDir, [await native(nativeDir, "big.jsonl", true)]);
    const blob = path.join(store.blobsDir, manifest.files[0]!.segments[0]!.blob);
    expect((await stat(blob)).size).toBe(size);
    expect(await allocated(blob)).toBeLessThan(budget);
    const into = path.join(base, "restored");
    await store.restore("latest", into);
    const restored = path.join(into, "big.jsonl");
    expect(await allocated(restored)).toBeLessThan(budget);
    const [mine, theirs] = [await readFile(file), await readFile(restored)];
    expect(theirs.length).toBe(size);
    expect(theirs.equals(mine)).toBe(true);
  });
});

describe("damage and failure", () => {
  it("detects a corrupted blob on restore and leaves no target behind", async () => {
    const { base, nativeDir, store } = await setup();
    await put(nativeDir, "a.bin", randomBytes(5000));
    const { files } = await store.create(nativeDir, [await native(nativeDir, "a.bin")]);
    const blob = files[0]!.segments[0]!.blob;
    const blobPath = path.join(store.blobsDir, blob);
    const bytes = await readFile(blobPath);
    bytes[100] = (bytes[100] ?? 0) ^ 0xff;
    await writeFile(blobPath, bytes);

    const into = path.join(base, "restored");
    await expect(store.restore("latest", into)).rejects.toThrow(new RegExp(`blob ${blob}.*corrupted`));
    expect(await readdir(base)).not.toContain("restored");
    expect((await readdir(base)).filter((n) => n.includes("restoring"))).toEqual([]);
  });

  it("checkpoints past a damaged last manifest, storing files whole; reading it names its file and the fix", async () => {
    const { base, nativeDir, store } = await setup();
    await put(nativeDir, "log.jsonl", "one\n");
    const list = async () => [await native(nativeDir, "log.jsonl", true)];
    await store.create(nativeDir, await list());
    const damaged = path.join(store.dir, "000001.json");
    for (const [id, text] of [
      ["000001", "{ cut off"],
      ["000002", '{"id":"000002"}'],
    ] as const) {
      await writeFile(path.join(store.dir, `${id}.json`), text);
      await appendFile(path.join(nativeDir, "log.jsonl"), "more\n");
      const made = await store.create(nativeDir, await list());
      expect(made.files[0]!.segments).toHaveLength(1);
      await store.restore(made.id, path.join(base, `restored-${made.id}`));
      expect(await read(path.join(base, `restored-${made.id}`), "log.jsonl")).toEqual(
        await read(nativeDir, "log.jsonl"),
      );
    }
    await expect(store.get("000001")).rejects.toThrow(
      `checkpoint 000001 cannot be used: its manifest ${damaged} is damaged (not a checkpoint manifest: not JSON`,
    );
    await expect(store.get("000002")).rejects.toThrow(/use another checkpoint of the session, or put back/);
  });

  it("names a missing blob", async () => {
    const { base, nativeDir, store } = await setup();
    await put(nativeDir, "a.txt", "alpha");
    const { files } = await store.create(nativeDir, [await native(nativeDir, "a.txt")]);
    const blob = files[0]!.segments[0]!.blob;
    await unlink(path.join(store.blobsDir, blob));
    await expect(store.restore("latest", path.join(base, "r"))).rejects.toThrow(
      new RegExp(`checkpoint 000001 is damaged: blob ${blob}.*missing.*: restore or fork another checkpoint`),
    );
  });

  // A real full disk: a tmpfs, where this process may mount one.
  it.runIf(mountable)(
    "says a restore the disk refused wrote nothing, naming the checkpoint and the fix",
    async () => {
      const { nativeDir, store } = await setup();
      await put(nativeDir, "a.bin", randomBytes(256 * 1024));
      await store.create(nativeDir, [await native(nativeDir, "a.bin")]);
      const disk = smallDisk("64k", unmounts);
      const failed = store.restore("latest", path.join(disk.home, "restored"));
      await expect(failed).rejects.toMatchObject({
        code: "insufficient_storage",
        message: expect.stringMatching(
          /^restore failed: the files of checkpoint 000001 could not be written \(ENOSPC: .*\); nothing was restored: free space on the daemon's disk and try again$/,
        ),
      });
      expect(await readdir(disk.home)).toEqual([]);
    },
  );

  it("refuses a restore whose target something else filled meanwhile as the caller's, naming the fix", async () => {
    const { base, nativeDir, store } = await setup();
    await put(nativeDir, "a.txt", "alpha");
    await store.create(nativeDir, [await native(nativeDir, "a.txt")]);
    const into = path.join(base, "restored");
    const both = await Promise.allSettled([store.restore("latest", into), store.restore("latest", into)]);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = both.find((r) => r.status === "rejected")!.reason;
    expect(refused).toMatchObject({
      code: "bad_request",
      field: "into",
      message: expect.stringMatching(/restore into a new or empty directory/),
    });
    expect((await read(into, "a.txt")).toString()).toBe("alpha");
    expect((await readdir(base)).filter((n) => n.includes("restoring"))).toEqual([]);
  });

  it("says a checkpoint the disk refused was not made, and what to do, not a bare ENOSPC", async () => {
    const base = await tempDir();
    const nativeDir = path.join(base, "native");
    await put(nativeDir, "a.txt", "alpha");
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const store = new CheckpointStore(path.join(base, "checkpoints"), {
      hooks: {
        beforeBlobCommit() {
          throw full;
        },
      },
    });
    const failed = store.create(nativeDir, [await native(nativeDir, "a.txt")]);
    await expect(failed).rejects.toBeInstanceOf(CheckpointError);
    await expect(failed).rejects.toMatchObject({ code: "insufficient_storage" });
    await expect(failed).rejects.toThrow(
      /^checkpoint failed: its files could not be stored \(ENOSPC: no space left on device, write\); no checkpoint was made: free space on the daemon's disk and checkpoint again$/,
    );
    expect(await store.list()).toEqual([]);
  });

  // Each file is checked, hashed and closed, then opened again only while its bytes are copied: a native dir of
  // more files than the descriptor limit checkpoints, and the daemon keeps its descriptors meanwhile.
  it.skipIf(process.platform !== "linux")(
    "holds no descriptor per file while it checkpoints many",
    async () => {
      const { base, nativeDir } = await setup();
      const openFds = () => readdirSync("/proc/self/fd").length;
      let most = 0;
      const note = () => {
        most = Math.max(most, openFds());
      };
      const store = new CheckpointStore(path.join(base, "checkpoints"), {
        hooks: { afterPlan: note, beforeBlobCommit: note },
      });
      const files = [];
      for (let i = 0; i < 120; i++) {
        await put(nativeDir, `d/f${i}`, `file ${i}`);
        files.push(await native(nativeDir, `d/f${i}`));
      }
      const before = openFds();
      expect((await store.create(nativeDir, files)).files).toHaveLength(120);
      expect(most - before).toBeLessThan(20);
      const into = path.join(base, "restored");
      await store.restore("latest", into);
      expect((await read(into, "d/f119")).toString()).toBe("file 119");
    },
  );
});
