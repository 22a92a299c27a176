// `brain harnesses` remembers each CLI's version while its program file stays the same file: a program replaced
// under the same path is asked again, even when the update kept its size and timestamps.
import { renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { VersionCache } from "./version-cache.js";

it("asks a program replaced under the same path again, though it kept the old one's size and times", async () => {
  const dir = tempDir("brain-version-cache-");
  const program = join(dir, "claude");
  const cacheFile = join(dir, "cache", "cli-versions.json");
  writeFileSync(program, "version one\n", { mode: 0o755 });
  // Whole seconds, which utimes sets exactly (an archive's times are whole seconds too).
  const time = 1_700_000_000;
  utimesSync(program, time, time);
  const first = new VersionCache(cacheFile);
  expect(await first.version(program, async () => "1.0.0")).toBe("1.0.0");
  first.save();
  // Unchanged: the cache answers, no probe.
  expect(await new VersionCache(cacheFile).version(program, async () => "probed")).toBe("1.0.0");

  // An update moved in over it, with the old file's size and times (as cp -p or an archive's times give).
  const update = join(dir, "claude.new");
  writeFileSync(update, "version two\n", { mode: 0o755 });
  utimesSync(update, time, time);
  renameSync(update, program);
  expect(statSync(program).mtimeMs).toBe(time * 1000);
  expect(await new VersionCache(cacheFile).version(program, async () => "2.0.0")).toBe("2.0.0");
  rmSync(dir, { recursive: true, force: true });
});
