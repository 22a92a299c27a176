// A Claude Code transcript moved to the project folder of a new cwd (a restore or fork elsewhere): moved within
// the native dir, and never through a folder the CLI swapped for a link.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { placeTranscript, projectFolder, transcriptPath } from "./transcripts.js";

const id = "5d0c1a2b-0000-4000-8000-000000000001";
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A native dir holding the session's transcript (and its sub-agent folder) under an old cwd's folder. */
function restored(): { native: string; config: string; cwd: string; old: string } {
  dir = tempDir("brain-transcripts-");
  const native = join(dir, "native");
  const cwd = join(dir, "work");
  mkdirSync(cwd);
  const config = join(native, "claude");
  const old = join(config, "projects/-old-work");
  mkdirSync(join(old, id), { recursive: true });
  writeFileSync(join(old, `${id}.jsonl`), '{"type":"user"}\n');
  writeFileSync(join(old, id, "agent-1.jsonl"), "{}\n");
  return { native, config, cwd, old };
}

it("moves the transcript and its sub-agent folder to the folder of the current cwd", () => {
  const { native, config, cwd, old } = restored();
  expect(placeTranscript(native, config, cwd, id)).toBe(true);
  const target = transcriptPath(config, cwd, id);
  expect(readFileSync(target, "utf8")).toBe('{"type":"user"}\n');
  expect(readdirSync(join(target, "..", id))).toEqual(["agent-1.jsonl"]);
  expect(readdirSync(old)).toEqual([]);
  expect(placeTranscript(native, config, cwd, id)).toBe(true); // already there
  expect(placeTranscript(native, config, cwd, "no-such-session")).toBe(false);
});

it("refuses a project folder the CLI swapped for a link to a host directory, and moves nothing there", () => {
  const { native, config, cwd, old } = restored();
  const outside = join(dir!, "host");
  mkdirSync(outside);
  const folder = projectFolder(cwd);
  symlinkSync(outside, join(config, "projects", folder));
  expect(() => placeTranscript(native, config, cwd, id)).toThrow(
    new RegExp(`native/claude/projects/${folder} is a symbolic link, not a file Brain wrote; remove it`),
  );
  expect(readdirSync(outside)).toEqual([]);
  expect(existsSync(join(old, `${id}.jsonl`))).toBe(true);
});
