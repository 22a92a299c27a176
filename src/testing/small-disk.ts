// A full disk for tests, as a real one fails: a small tmpfs. Mounting needs root (CAP_SYS_ADMIN); where this
// process cannot mount, the tests that need one are skipped and say so.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { tempDir } from "./brain.js";

/** Whether this process may mount a tmpfs. */
export function canMount(): boolean {
  const dir = tempDir("brain-small-disk-probe-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" });
    execFileSync("umount", [dir]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A directory on a tmpfs of `size` (as mount takes it: "64k", "1m"); `grow` makes room again. `cleanups` gets
 * its unmount, which the caller runs after the test.
 */
export function smallDisk(
  size: string,
  cleanups: (() => void | Promise<void>)[],
): { home: string; grow(): void } {
  const home = tempDir("brain-small-disk-");
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", home]);
  cleanups.push(() => {
    try {
      execFileSync("umount", [home]);
    } catch {
      execFileSync("umount", ["-l", home]);
    }
    rmSync(home, { recursive: true, force: true });
  });
  return { home, grow: () => execFileSync("mount", ["-o", "remount,size=64m", home]) };
}
