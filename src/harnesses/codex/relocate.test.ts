// Moving a Codex rollout to another directory: paths rewritten only where whole, and the fingerprints Codex keeps
// of the context fragments it showed the model follow them, so a resumed thread sends nothing again.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { fragmentHash, relocateRollouts, rolloutCwd, rolloutsOf } from "./relocate.js";

// A permissions fragment of the shape Codex shows the model, naming the working directory. That fragmentHash is
// the fingerprint Codex itself writes is checked against the real CLI in codex.test.ts.
const permissions = (cwd: string) =>
  "<permissions instructions>\nFilesystem sandboxing defines which files can be read or written. `sandbox_mode` is `workspace-write`: The sandbox permits reading files, and editing files in `cwd` and `writable_roots`. Editing files in other directories requires approval. Network access is restricted.\n The writable roots are `" +
  cwd +
  "`.\n</permissions instructions>";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function rollout(home: string, thread: string, cwd: string): string {
  const dir = join(home, "sessions/2026/12/01");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `rollout-2026-12-01T19-45-06-${thread}.jsonl`);
  const block = permissions(cwd);
  const lines = [
    { type: "session_meta", payload: { id: thread, cwd, runtime_workspace_roots: [cwd] } },
    {
      type: "response_item",
      payload: { type: "message", role: "developer", content: [{ type: "input_text", text: `${block}\n` }] },
    },
    {
      type: "world_state",
      payload: { state: { permissions: { instructions: fragmentHash("developer", block) } } },
    },
    { type: "turn_context", payload: { cwd, note: `${cwd}space stays, ${cwd}/sub moves` } },
  ];
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return file;
}

describe("codex rollout relocation", () => {
  it("rewrites the old paths where whole and re-fingerprints the fragments that named them", () => {
    const home = tempDir("codex-relocate-");
    dirs.push(home);
    const [from, to] = [join(home, "old/place/work"), join(home, "new/spot/work")];
    const file = rollout(home, "01a2-thread", from);
    expect(rolloutsOf(home, "01a2-thread")).toEqual([file]);
    expect(rolloutCwd(home, file)).toBe(from);

    expect(relocateRollouts(home, [file], [{ from, to }])).toEqual([file]);
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0].payload).toMatchObject({
      cwd: to,
      runtime_workspace_roots: [to],
    });
    const block = permissions(to);
    expect(lines[1].payload.content[0].text).toBe(`${block}\n`);
    expect(lines[2].payload.state.permissions.instructions).toBe(fragmentHash("developer", block));
    expect(lines[3].payload.note).toBe(`${from}space stays, ${to}/sub moves`);
    // Nothing to move: nothing written.
    expect(relocateRollouts(home, [file], [{ from: to, to }])).toEqual([]);
  });

  it("writes a rollout back only through real directories from the native dir", () => {
    const native = tempDir("codex-relocate-");
    dirs.push(native);
    const home = join(native, "codex");
    const [from, to] = [join(native, "old/work"), join(native, "new/work")];
    const file = rollout(home, "03c4-thread", from);
    // What runs in the container swaps `codex/sessions` for a link to a host directory holding a look-alike.
    const host = join(native, "..", `${basename(native)}-host`);
    dirs.push(host);
    const planted = rollout(host, "03c4-thread", from);
    const before = readFileSync(planted, "utf8");
    rmSync(join(home, "sessions"), { recursive: true });
    symlinkSync(join(host, "sessions"), join(home, "sessions"));
    expect(() => relocateRollouts(native, [file], [{ from, to }])).toThrow(
      /codex\/sessions is a symbolic link, not a file Brain wrote; remove it/,
    );
    expect(readFileSync(planted, "utf8")).toBe(before);
  });

  it("finds rollouts in real directories only: a link is not followed, and a dangling one fails nothing", () => {
    const native = tempDir("codex-relocate-");
    dirs.push(native);
    const home = join(native, "codex");
    const file = rollout(home, "04d5-thread", join(native, "work"));
    // What runs in the session puts links in CODEX_HOME/sessions: to a host directory holding a look-alike (a link
    // to "/" would walk the whole host, at every resume), and to nothing.
    const host = tempDir("codex-relocate-host-");
    dirs.push(host);
    rollout(host, "04d5-thread", join(native, "work"));
    symlinkSync(join(host, "sessions"), join(home, "sessions", "elsewhere"));
    symlinkSync(join(native, "nowhere"), join(home, "sessions", "dangling"));
    expect(rolloutsOf(home, "04d5-thread")).toEqual([file]);
    // The sessions dir itself swapped for a link.
    rmSync(join(home, "sessions"), { recursive: true });
    symlinkSync(join(host, "sessions"), join(home, "sessions"));
    expect(rolloutsOf(home, "04d5-thread")).toEqual([]);
  });

  it("never waits on a FIFO swapped in for a rollout after it was found", () => {
    const native = tempDir("codex-relocate-");
    dirs.push(native);
    const home = join(native, "codex");
    const [from, to] = [join(native, "old/work"), join(native, "new/work")];
    const file = rollout(home, "05e6-thread", from);
    rmSync(file);
    execFileSync("mkfifo", [file]);
    // Lets a reader that waits on it go at once (it reads nothing): that code then fails this test, not hangs it.
    const writer = spawn("sh", ["-c", 'while :; do : > "$0"; done', file], { stdio: "ignore" });
    try {
      expect(() => relocateRollouts(native, [file], [{ from, to }])).toThrow(/is not a regular file/);
      expect(() => rolloutCwd(native, file)).toThrow(/is not a regular file/);
    } finally {
      writer.kill("SIGKILL");
    }
  });
});
