// Listing a CLI's native files while the CLI creates and removes its lock files beside them; Brain's state
// files in a native dir a container can write, where what runs inside may plant links.
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { listNativeFiles, readJsonFile, writeJsonFile } from "./files.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("skips a file that is gone between the directory listing and its lstat, and lists the rest", async () => {
  dir = tempDir("brain-files-");
  mkdirSync(join(dir, "state"));
  writeFileSync(join(dir, "state", "session.jsonl"), "{}\n");
  const lock = join(dir, "state", "config.json.lock");
  // Each lock file lives for one turn of the loop, as a CLI's do: made, then removed before the next listing
  // looks at it. Many listings, so some fall between readdir and lstat.
  let churning = true;
  const churn = () => {
    if (!churning) return;
    writeFileSync(lock, "");
    setImmediate(() => {
      rmSync(lock, { force: true });
      setImmediate(churn);
    });
  };
  churn();
  try {
    for (let i = 0; i < 300; i++) {
      const files = await listNativeFiles(dir, "state", { appendOnly: () => true });
      expect(files.map((f) => f.path)).toContain("state/session.jsonl");
    }
  } finally {
    churning = false;
  }
});

// Linux only: elsewhere nothing shows where a descriptor is, and the walk reads by name (the checkpoint still
// refuses a file that resolves outside).
it.skipIf(process.platform !== "linux")(
  "never lists a file from outside the native dir while a directory is swapped for a symbolic link",
  async () => {
    dir = tempDir("brain-files-");
    const nativeDir = join(dir, "native");
    mkdirSync(join(nativeDir, "state", "d"), { recursive: true });
    writeFileSync(join(nativeDir, "state", "d", "inside.txt"), "mine");
    mkdirSync(join(dir, "outside"));
    writeFileSync(join(dir, "outside", "host-only.txt"), "HOST");
    // The agent's loop: state/d is a real directory, then a link to outside, then the directory again, one swap
    // per turn of the event loop, so listings fall between a directory's lstat and its reading.
    const d = join(nativeDir, "state", "d");
    const aside = join(nativeDir, "state", "real");
    const link = join(nativeDir, "state", "link");
    symlinkSync(join(dir, "outside"), link);
    let swapping = true;
    const swap = () => {
      if (!swapping) return;
      renameSync(d, aside);
      renameSync(link, d);
      setImmediate(() => {
        renameSync(d, link);
        renameSync(aside, d);
        setImmediate(swap);
      });
    };
    swap();
    const seen = new Set<string>();
    try {
      for (let i = 0; i < 300; i++) {
        for (const f of await listNativeFiles(nativeDir, "state", { appendOnly: () => false }))
          seen.add(f.path);
      }
    } finally {
      swapping = false;
    }
    expect([...seen].filter((p) => p.includes("host-only"))).toEqual([]);
    // A symbolic link as the listed directory itself leads outside too: nothing is listed from there.
    symlinkSync(join(dir, "outside"), join(nativeDir, "elsewhere"));
    expect(await listNativeFiles(nativeDir, "elsewhere", { appendOnly: () => false })).toEqual([]);
  },
);

it("writes a state file without following a link planted at its temporary name or at the file itself", async () => {
  dir = tempDir("brain-files-");
  const native = join(dir, "native");
  mkdirSync(native);
  const outside = join(dir, "brain.config.json"); // a host file the container cannot see
  writeFileSync(outside, '{"precious":true}\n');
  const state = join(native, "claude-code.json");
  symlinkSync(outside, `${state}.tmp`);
  await writeJsonFile(native, state, { session_id: "from-the-cli" });
  expect(readFileSync(outside, "utf8")).toBe('{"precious":true}\n');
  expect(await readJsonFile(native, state)).toEqual({ session_id: "from-the-cli" });

  rmSync(state);
  symlinkSync(outside, state);
  await writeJsonFile(native, state, { session_id: "next" });
  expect(readFileSync(outside, "utf8")).toBe('{"precious":true}\n');
  expect(lstatSync(state).isFile()).toBe(true);
});

it("refuses to read a state file that is a link or a FIFO, and reads none that is absent", async () => {
  dir = tempDir("brain-files-");
  const secret = join(dir, "tokens.json");
  writeFileSync(secret, '{"admin":"SECRET"}');
  const state = join(dir, "claude-code.json");
  expect(await readJsonFile(dir, state)).toBeUndefined();
  symlinkSync(secret, state);
  await expect(readJsonFile(dir, state)).rejects.toThrow(/claude-code\.json is a symbolic link/);
  rmSync(state);
  // A FIFO would block an ordinary open until something wrote to it.
  execFileSync("mkfifo", [state]);
  await expect(readJsonFile(dir, state)).rejects.toThrow(/claude-code\.json is not a regular file/);
});
