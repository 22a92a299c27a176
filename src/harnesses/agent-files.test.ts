// Brain's files in a directory an agent can write: a link or a FIFO planted at the name is never followed.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import {
  endAgentFileLineSync,
  makeAgentDirSync,
  moveAgentFileSync,
  readAgentFile,
  replaceAgentFile,
  writeAgentFileSync,
} from "./agent-files.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("writeAgentFileSync writes a config in place, and refuses a link or a FIFO planted at its name", () => {
  dir = tempDir("brain-agent-files-");
  const outside = join(dir, "host.conf"); // a host file the agent cannot see
  writeFileSync(outside, "precious\n");
  const config = join(dir, "config.toml");

  writeAgentFileSync(dir!, config, "a = 1\nb = 2\n", 0o600);
  writeAgentFileSync(dir!, config, "a = 3\n", 0o600); // shorter: nothing of the old text is left
  expect(readFileSync(config, "utf8")).toBe("a = 3\n");
  expect(statSync(config).mode & 0o777).toBe(0o600);

  rmSync(config);
  symlinkSync(outside, config);
  expect(() => writeAgentFileSync(dir!, config, "stolen")).toThrow(
    /config\.toml is a symbolic link, not a file Brain wrote/,
  );
  expect(readFileSync(outside, "utf8")).toBe("precious\n");
  expect(lstatSync(config).isSymbolicLink()).toBe(true);

  rmSync(config);
  execFileSync("mkfifo", [config]);
  // No reader: without O_NONBLOCK the open would wait forever.
  expect(() => writeAgentFileSync(dir!, config, "x")).toThrow(/config\.toml is not a regular file/);
});

it("writeAgentFileSync keeps an existing file's mode unless given one", () => {
  dir = tempDir("brain-agent-files-");
  const session = join(dir, "session.jsonl");
  writeFileSync(session, "old\n", { mode: 0o640 });
  writeAgentFileSync(dir!, session, "new\n");
  expect(readFileSync(session, "utf8")).toBe("new\n");
  expect(statSync(session).mode & 0o777).toBe(0o640);
});

it("walks from the root: a directory on the way swapped for a link is refused, and nothing lands outside", async () => {
  dir = tempDir("brain-agent-files-");
  const native = join(dir, "native");
  const outside = join(dir, "etc"); // a host directory the agent cannot see
  mkdirSync(native);
  mkdirSync(outside);
  writeFileSync(join(outside, "config.toml"), "precious\n");

  // Nested writes make their directories, and read back.
  writeAgentFileSync(native, "codex/config.toml", "a = 1\n", 0o600);
  await replaceAgentFile(native, join(native, "state", "deep", "s.json"), "{}\n");
  expect(await readAgentFile(native, "codex/config.toml")).toBe("a = 1\n");
  expect(await readAgentFile(native, "state/deep/s.json")).toBe("{}\n");
  expect(await readAgentFile(native, "missing/dir/file")).toBeUndefined();

  // The agent swaps `codex` for a link to a host directory: every write and read through it is refused.
  rmSync(join(native, "codex"), { recursive: true });
  symlinkSync(outside, join(native, "codex"));
  const refused = /native\/codex is a symbolic link, not a file Brain wrote; remove it/;
  expect(() => writeAgentFileSync(native, "codex/config.toml", "stolen")).toThrow(refused);
  await expect(replaceAgentFile(native, "codex/config.toml", "stolen")).rejects.toThrow(refused);
  await expect(readAgentFile(native, "codex/config.toml")).rejects.toThrow(refused);
  expect(() => makeAgentDirSync(native, "codex/sessions")).toThrow(refused);
  expect(() => moveAgentFileSync(native, "state/deep/s.json", "codex/s.json")).toThrow(refused);
  expect(readFileSync(join(outside, "config.toml"), "utf8")).toBe("precious\n");
  expect(existsSync(join(outside, "sessions"))).toBe(false);
  expect(existsSync(join(outside, "s.json"))).toBe(false);

  // A file where a directory should be.
  writeFileSync(join(native, "plain"), "x");
  expect(() => writeAgentFileSync(native, "plain/f", "x")).toThrow(/native\/plain is not a directory/);
});

it("refuses a path that leaves the root", () => {
  dir = tempDir("brain-agent-files-");
  for (const path of ["../x", "a/../../x", "/etc/passwd", ".", ""]) {
    expect(() => writeAgentFileSync(dir!, path, "x")).toThrow(/is not a path inside .*; give one under it/);
  }
});

it("moves a file between directories under the root, making the target's", () => {
  dir = tempDir("brain-agent-files-");
  writeAgentFileSync(dir, "projects/a/t.jsonl", "line\n");
  moveAgentFileSync(dir, join(dir, "projects/a/t.jsonl"), join(dir, "projects/b/t.jsonl"));
  expect(readFileSync(join(dir, "projects/b/t.jsonl"), "utf8")).toBe("line\n");
  expect(existsSync(join(dir, "projects/a/t.jsonl"))).toBe(false);
});

it("endAgentFileLineSync ends a torn last line with a newline only, and refuses a link or a FIFO", () => {
  dir = tempDir("brain-agent-files-");
  const file = join(dir, "session.jsonl");
  writeFileSync(file, '{"a":1}\n{"b":');
  expect(endAgentFileLineSync(dir, file)).toBe(true);
  expect(readFileSync(file, "utf8")).toBe('{"a":1}\n{"b":\n');
  expect(endAgentFileLineSync(dir, file)).toBe(false);
  expect(readFileSync(file, "utf8")).toBe('{"a":1}\n{"b":\n');
  expect(endAgentFileLineSync(dir, join(dir, "none.jsonl"))).toBe(false);

  const outside = join(dir, "host.txt");
  writeFileSync(outside, "precious");
  const link = join(dir, "link.jsonl");
  symlinkSync(outside, link);
  expect(() => endAgentFileLineSync(dir!, link)).toThrow();
  expect(readFileSync(outside, "utf8")).toBe("precious");
  const fifo = join(dir, "fifo.jsonl");
  execFileSync("mkfifo", [fifo]);
  expect(() => endAgentFileLineSync(dir!, fifo)).toThrow(/not a regular file|regular/);
});

// Brain as root, the program as a dev container's non-root user: what Brain makes there is that user's.
it.runIf(process.getuid?.() === 0)(
  "hands what it makes to an owner given, and leaves a directory already there as it was",
  async () => {
    dir = tempDir("brain-agent-files-");
    const owner = { uid: 1000, gid: 1000 };
    mkdirSync(join(dir, "kept"));
    const ids = (path: string) => [lstatSync(path).uid, lstatSync(path).gid];

    makeAgentDirSync(dir, "kept/home/made", owner);
    writeAgentFileSync(dir, "codex/config.toml", "a = 1\n", 0o600, owner);
    await replaceAgentFile(dir, "state/out.json", "{}", owner);
    expect(ids(join(dir, "kept"))).toEqual([0, 0]);
    for (const made of [
      "kept/home",
      "kept/home/made",
      "codex",
      "codex/config.toml",
      "state",
      "state/out.json",
    ])
      expect([made, ...ids(join(dir, made))]).toEqual([made, 1000, 1000]);
    expect(statSync(join(dir, "codex/config.toml")).mode & 0o777).toBe(0o600);

    // Rewritten on every start: a file that was root's becomes the owner's.
    writeFileSync(join(dir, "kept", "old.toml"), "");
    writeAgentFileSync(dir, "kept/old.toml", "b = 2\n", 0o600, owner);
    expect(ids(join(dir, "kept", "old.toml"))).toEqual([1000, 1000]);

    // Moved (a transcript restored root's, placed in the folder for a new cwd): the folders made and it are the
    // owner's; the folder it left keeps its own.
    writeFileSync(join(dir, "kept", "t.jsonl"), "line\n");
    moveAgentFileSync(dir, "kept/t.jsonl", "projects/new/t.jsonl", owner);
    for (const made of ["projects", "projects/new", "projects/new/t.jsonl"])
      expect([made, ...ids(join(dir, made))]).toEqual([made, 1000, 1000]);
    expect(ids(join(dir, "kept"))).toEqual([0, 0]);

    // Without an owner, nothing changes hands.
    writeAgentFileSync(dir, "mine/file", "c\n");
    expect([...ids(join(dir, "mine")), ...ids(join(dir, "mine/file"))]).toEqual([0, 0, 0, 0]);
  },
);
