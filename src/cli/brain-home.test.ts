// A $BRAIN_HOME that is a regular file is refused by name, with the fix, rather than as mkdir's EEXIST.
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { root } from "../testing/brain-cli.js";

const dir = tempDir("brain-home-file-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("$BRAIN_HOME that is not a directory", () => {
  it.each([
    ["serve", "--port", "0"],
    ["run", "--harness", "echo", "hi"],
  ])("brain %s names BRAIN_HOME and what to do", (...args) => {
    const home = join(dir, "a-file");
    writeFileSync(home, "");
    const result = spawnSync(process.execPath, [join(root, "bin/brain.js"), ...args], {
      cwd: dir,
      env: { ...process.env, BRAIN_HOME: home },
      encoding: "utf8",
      input: "",
    });
    expect(result.stderr).toBe(
      `brain: $BRAIN_HOME (${home}) is not a directory: Brain keeps its sessions and tokens there; set BRAIN_HOME to a directory (or a path that does not exist yet), or move that file away\n`,
    );
    expect(result.status).toBe(2);
  });
});

// Node's recursive mkdir never settles below a directory of procfs or sysfs (each ENOENT there has it make the
// parent again), with the event loop blocked: `brain token` spun until SIGKILL, deaf to SIGTERM.
describe("$BRAIN_HOME below /proc or /sys, where no directory can be made", () => {
  it.each(["/proc/brain-nope/home", "/sys/brain-nope"])("%s is refused by name, at once", (home) => {
    const result = spawnSync(process.execPath, [join(root, "bin/brain.js"), "token"], {
      cwd: dir,
      env: { ...process.env, BRAIN_HOME: home },
      encoding: "utf8",
      input: "",
      // Only the failing (pre-fix) run reaches it: it spun for ever.
      timeout: 20_000,
      killSignal: "SIGKILL",
    });
    expect(result.stderr).toMatch(
      new RegExp(
        `^brain: \\$BRAIN_HOME \\(${home}\\) is on a file system where no directory can be made \\(`,
      ),
    );
    expect(result.status).toBe(2);
  });
});
