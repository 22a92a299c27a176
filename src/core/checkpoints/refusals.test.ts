import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFile, chmod, mkdir, open, readdir, rename, rm, symlink, truncate } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { NativeFile } from "../../protocol/runner.js";
import { CheckpointError, type CheckpointHooks, CheckpointStore, WINDOW } from "./index.js";
import { native, put, tempDirs } from "./testing.js";

const temp = tempDirs();
const tempDir = temp.make;
afterEach(temp.cleanup);
const SECRET = "sk-ant-THIS-IS-THE-KEY-0123456789";

/** Secrets as a session passes them: each with the name a refusal gives it (SECRET_1, SECRET_2, ...). */
const named = (values: string[]) => values.map((value, i) => ({ name: `SECRET_${i + 1}`, value }));

async function setup() {
  const base = await tempDir();
  const nativeDir = path.join(base, "native");
  await put(nativeDir, "ok.txt", "fine");
  return { base, nativeDir, store: new CheckpointStore(path.join(base, "checkpoints")) };
}

/** Asserts a refusal naming the file and matching `rule`, and that nothing new was written. */
async function expectRefused(
  store: CheckpointStore,
  nativeDir: string,
  files: NativeFile[],
  name: string,
  rule: RegExp,
  secrets: string[] = [],
): Promise<CheckpointError> {
  const before = await store.list();
  const blobs = await readdir(store.blobsDir).catch(() => []);
  const err = await store.create(nativeDir, files, { secrets: named(secrets) }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CheckpointError);
  const message = (err as Error).message;
  expect(message).toContain(JSON.stringify(name));
  expect(message).toMatch(rule);
  expect(await store.list()).toEqual(before);
  expect(await readdir(store.blobsDir).catch(() => [])).toEqual(blobs);
  return err as CheckpointError;
}

const file = (p: string, size = 4, append_only = false): NativeFile => ({ path: p, size, append_only });

describe("paths", () => {
  it.each([
    ["/etc/passwd", /absolute/],
    ["", /empty/],
    ["../outside.txt", /"\.\."/],
    ["a/../ok.txt", /"\.\."/],
    ["./ok.txt", /not normalized.*"ok\.txt"/],
    ["a//ok.txt", /not normalized/],
    ["dir/", /not normalized/],
    ["ok\0.txt", /NUL/],
    ["a\\ok.txt", /backslash/],
  ])("refuses %j", async (p, rule) => {
    const { nativeDir, store } = await setup();
    await expectRefused(store, nativeDir, [file("ok.txt"), file(p)], p, rule);
  });

  it("refuses a path listed twice", async () => {
    const { nativeDir, store } = await setup();
    await expectRefused(store, nativeDir, [file("ok.txt"), file("ok.txt")], "ok.txt", /listed twice/);
  });

  it("refuses a file under a symlinked dir that points outside", async () => {
    const { base, nativeDir, store } = await setup();
    await put(base, "outside/leak.txt", "leak");
    await symlink(path.join(base, "outside"), path.join(nativeDir, "link"));
    await expectRefused(store, nativeDir, [file("link/leak.txt")], "link/leak.txt", /outside the native dir/);
  });
});

describe("file kinds and sizes", () => {
  it("refuses a symlink, even to a file inside", async () => {
    const { nativeDir, store } = await setup();
    await symlink("ok.txt", path.join(nativeDir, "alias.txt"));
    await expectRefused(store, nativeDir, [file("alias.txt")], "alias.txt", /symbolic link/);
  });

  it("refuses a directory, a missing file and a FIFO", async () => {
    const { nativeDir, store } = await setup();
    await mkdir(path.join(nativeDir, "sub"));
    await expectRefused(store, nativeDir, [file("sub", 0)], "sub", /directory/);
    await expectRefused(store, nativeDir, [file("nope.txt")], "nope.txt", /does not exist/);
    await expectRefused(store, nativeDir, [file("ok.txt/x")], "ok.txt/x", /does not exist/);
    if (process.platform !== "win32") {
      execFileSync("mkfifo", [path.join(nativeDir, "pipe")]);
      await expectRefused(store, nativeDir, [file("pipe", 0)], "pipe", /FIFO/);
    }
  });

  it("names a file the daemon may not read and the fix, not a bare EACCES", async () => {
    const { base, nativeDir } = await setup();
    await chmod(base, 0o755);
    await chmod(path.join(nativeDir, "ok.txt"), 0);
    // Root reads any file whatever its mode: there, the checkpoint is made by a child running as nobody.
    const index = pathToFileURL(
      path.join(import.meta.dirname, "../../../dist/src/core/checkpoints/index.js"),
    );
    const script = `const { CheckpointStore } = await import(${JSON.stringify(index.href)});
      const store = new CheckpointStore(${JSON.stringify(path.join(base, "checkpoints"))});
      const err = await store.create(${JSON.stringify(nativeDir)}, [${JSON.stringify(file("ok.txt"))}]).catch((e) => e);
      console.log(JSON.stringify({ name: err.name, message: err.message }));`;
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      ...asNobody,
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toMatchObject({
      name: "CheckpointError",
      message: expect.stringContaining(
        'native file "ok.txt": the daemon may not read it (EACCES); let the daemon\'s user read it',
      ),
    });
  });

  it("refuses a size that is not the size on disk", async () => {
    const { nativeDir, store } = await setup();
    await expectRefused(store, nativeDir, [file("ok.txt", 5)], "ok.txt", /size on disk is 4 bytes but 5/);
  });
});

// A file is checked and hashed, closed, and opened again to be copied: what happens in between must not get a
// different file into the checkpoint. The afterPlan seam is that moment.
describe("swaps between the check and the copy", () => {
  async function swapping(swap: (nativeDir: string, base: string) => Promise<void>) {
    const base = await tempDir();
    const nativeDir = path.join(base, "native");
    await put(nativeDir, "d/f.txt", "mine");
    await put(base, "outside/f.txt", "HOST");
    const hooks: CheckpointHooks = { afterPlan: () => swap(nativeDir, base) };
    return { nativeDir, store: new CheckpointStore(path.join(base, "checkpoints"), { hooks }) };
  }

  it("refuses a file whose directory became a symbolic link to outside the native dir", async () => {
    const { nativeDir, store } = await swapping(async (nativeDir, base) => {
      await rename(path.join(nativeDir, "d"), path.join(nativeDir, "real"));
      await symlink(path.join(base, "outside"), path.join(nativeDir, "d"));
    });
    // Linux names where the descriptor really is; elsewhere the second resolution sees the directory moved.
    const rule = process.platform === "linux" ? /resolves to .*outside.*outside the native dir/ : /changed/;
    await expectRefused(store, nativeDir, [file("d/f.txt")], "d/f.txt", rule);
  });

  it("refuses a file replaced by another of the same size, or removed", async () => {
    const replaced = await swapping(async (nativeDir) => {
      await put(nativeDir, "d/new.txt", "evil");
      await rename(path.join(nativeDir, "d/new.txt"), path.join(nativeDir, "d/f.txt"));
    });
    const rule = /changed while being checkpointed/;
    await expectRefused(replaced.store, replaced.nativeDir, [file("d/f.txt")], "d/f.txt", rule);
    const removed = await swapping((nativeDir) => rm(path.join(nativeDir, "d/f.txt")));
    await expectRefused(removed.store, removed.nativeDir, [file("d/f.txt")], "d/f.txt", rule);
  });

  it("refuses a file swapped for a FIFO, without waiting on it for a writer that never comes", async () => {
    // Nothing writes to this FIFO: an open that waited for a writer would hold the checkpoint (and one of Node's
    // few file system threads) for good, and this test would time out.
    const { nativeDir, store } = await swapping(async (nativeDir) => {
      await rm(path.join(nativeDir, "d/f.txt"));
      execFileSync("mkfifo", [path.join(nativeDir, "d/f.txt")]);
    });
    await expectRefused(store, nativeDir, [file("d/f.txt")], "d/f.txt", /changed while being checkpointed/);
  });
});

describe("append-only files", () => {
  async function withLog(size: number) {
    const ctx = await setup();
    await put(ctx.nativeDir, "log.jsonl", randomBytes(size));
    await ctx.store.create(ctx.nativeDir, [await native(ctx.nativeDir, "log.jsonl", true)]);
    const poke = async (at: number) => {
      const fh = await open(path.join(ctx.nativeDir, "log.jsonl"), "r+");
      const b = Buffer.alloc(1);
      await fh.read(b, 0, 1, at);
      await fh.write(Buffer.from([(b[0] ?? 0) ^ 0xff]), 0, 1, at);
      await fh.close();
    };
    return { ...ctx, poke, list: async () => [await native(ctx.nativeDir, "log.jsonl", true)] };
  }

  it("refuses a shrunk file", async () => {
    const { nativeDir, store, list } = await withLog(10_000);
    await truncate(path.join(nativeDir, "log.jsonl"), 9_000);
    await expectRefused(store, nativeDir, await list(), "log.jsonl", /shrank from 10000 to 9000/);
  });

  it("refuses rewritten bytes in the head window", async () => {
    const { nativeDir, store, list, poke } = await withLog(100_000);
    await poke(10);
    await appendFile(path.join(nativeDir, "log.jsonl"), "more\n");
    await expectRefused(
      store,
      nativeDir,
      await list(),
      "log.jsonl",
      new RegExp(`bytes 0\\.\\.${WINDOW} differ`),
    );
  });

  it("refuses rewritten bytes in the tail window", async () => {
    const { nativeDir, store, list, poke } = await withLog(100_000);
    await appendFile(path.join(nativeDir, "log.jsonl"), "more\n");
    await poke(100_000 - 100);
    const tail = `bytes ${100_000 - WINDOW}\\.\\.100000 differ from checkpoint 000001`;
    await expectRefused(store, nativeDir, await list(), "log.jsonl", new RegExp(tail));
  });

  it("accepts a file that only grew", async () => {
    const { nativeDir, store, list } = await withLog(100);
    await appendFile(path.join(nativeDir, "log.jsonl"), "more\n");
    expect((await store.create(nativeDir, await list())).id).toBe("000002");
  });
});

describe("secrets", () => {
  it("refuses a secret in a new append, without printing it", async () => {
    const { nativeDir, store } = await setup();
    await put(nativeDir, "log.jsonl", "clean line\n".repeat(1000));
    const list = async () => [await native(nativeDir, "log.jsonl", true)];
    await store.create(nativeDir, await list(), { secrets: named([SECRET]) });
    await appendFile(path.join(nativeDir, "log.jsonl"), `{"key":"${SECRET}"}\n`);
    const err = await expectRefused(store, nativeDir, await list(), "log.jsonl", /credential/, [SECRET]);
    expect(err.message).not.toContain(SECRET);
    expect(err.message).not.toContain(SECRET.slice(0, 12));
  });

  it("catches a secret straddling the previous end of an append-only file", async () => {
    const { nativeDir, store } = await setup();
    await put(nativeDir, "log.jsonl", `prefix ${SECRET.slice(0, 10)}`);
    const list = async () => [await native(nativeDir, "log.jsonl", true)];
    await store.create(nativeDir, await list(), { secrets: named([SECRET]) });
    await appendFile(path.join(nativeDir, "log.jsonl"), `${SECRET.slice(10)} suffix`);
    await expectRefused(store, nativeDir, await list(), "log.jsonl", /credential/, [SECRET]);
  });

  // A key with "/" (base64), as JSON encoders write it: escaped "\/", every character "\u"-escaped (Python's
  // ensure_ascii of a non-ASCII one, any of them), and kept in JSON held as a string in a JSONL transcript.
  const KEY = "sk-B64/key+0123456789/é";
  const uEscaped = (text: string) =>
    [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  it.each([
    ["slash-escaped", `{"key":"${KEY.replaceAll("/", "\\/")}"}`],
    ["u-escaped", `{"key":"${uEscaped(KEY)}"}`],
    ["escaped twice", JSON.stringify({ content: `{"key":"${KEY.replaceAll("/", "\\/")}"}` })],
    ["u-escaped twice", JSON.stringify({ content: `{"key":"${uEscaped(KEY)}"}` })],
  ])("refuses a secret written %s, naming where it starts", async (_, json) => {
    const { nativeDir, store } = await setup();
    const data = Buffer.alloc(2 << 20, "x");
    const at = (1 << 20) - 20; // the escaped form straddles the 1 MiB read chunk boundary
    data.write(json, at);
    await put(nativeDir, "t.jsonl", data);
    // Where the key's first character starts: its escape's first backslash when it is escaped.
    let start = data.indexOf(json.includes("u0073") ? "u0073" : "sk-", at);
    while (json.includes("u0073") && data[start - 1] === 0x5c) start--;
    const files = [await native(nativeDir, "t.jsonl")];
    const rule = new RegExp(`the value of SECRET_1, JSON-escaped, at byte ${start}\\)`);
    await expectRefused(store, nativeDir, files, "t.jsonl", rule, [KEY]);
  });

  it("catches an escaped secret straddling the previous end of an append-only file, and passes other escapes", async () => {
    const { nativeDir, store } = await setup();
    const escaped = uEscaped(KEY);
    await put(nativeDir, "log.jsonl", `{"a":"\\\\ \\u00e9 \\/ \\"},{"key":"${escaped.slice(0, 100)}`);
    const list = async () => [await native(nativeDir, "log.jsonl", true)];
    await store.create(nativeDir, await list(), { secrets: named([KEY]) });
    await appendFile(path.join(nativeDir, "log.jsonl"), `${escaped.slice(100)}"}\n`);
    await expectRefused(store, nativeDir, await list(), "log.jsonl", /JSON-escaped/, [KEY]);
  });

  it("refuses a secret anywhere in a whole file, across read chunks", async () => {
    const { nativeDir, store } = await setup();
    const at = (1 << 20) - 5; // straddles the 1 MiB read chunk boundary
    const data = Buffer.alloc(2 << 20, "x");
    data.write(SECRET, at);
    await put(nativeDir, "state.bin", data);
    const err = await expectRefused(
      store,
      nativeDir,
      [file("ok.txt"), await native(nativeDir, "state.bin")],
      "state.bin",
      new RegExp(`the value of SECRET_2, at byte ${at}`),
      ["other-secret", SECRET],
    );
    expect(err.message).not.toContain(SECRET);
  });
});
