// CLI versions remembered between runs of `brain harnesses`: asking a CLI its version starts it (seconds for
// some), and the answer only changes when its program file does. Keyed by the program's path, valid while its
// inode, ctime, mtime and size are the ones seen when it answered: a file replaced under the same path (an update
// moved or copied in with its timestamps kept, same size) has a new inode or ctime, which no one can set back.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

interface Entry extends FileStamp {
  version: string;
}

interface FileStamp {
  ino: number;
  ctimeMs: number;
  mtimeMs: number;
  size: number;
}

export class VersionCache {
  private entries: Record<string, Entry> | undefined;
  private changed = false;

  /** `file`: the cache file, e.g. $BRAIN_HOME/cache/cli-versions.json. */
  constructor(private readonly file: string) {}

  /** The program's version from the cache, or from `probe` (then remembered when it answered one). */
  async version(path: string, probe: () => Promise<string | undefined>): Promise<string | undefined> {
    const stat = statOf(path);
    const entries = this.load();
    const hit = entries[path];
    if (stat && hit && sameFile(hit, stat)) return hit.version;
    const version = await probe();
    if (stat && version) {
      entries[path] = { ...stat, version };
      this.changed = true;
    }
    return version;
  }

  /** Writes the cache if it learned anything (tmp + rename: a concurrent reader never sees half a file). */
  save(): void {
    if (!this.changed || !this.entries) return;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(this.entries, null, 2)}\n`);
      renameSync(tmp, this.file);
      this.changed = false;
    } catch {
      // A read-only $BRAIN_HOME costs the next run its probes, nothing else: the cache is not worth failing for.
    }
  }

  private load(): Record<string, Entry> {
    if (this.entries) return this.entries;
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8"));
      this.entries = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
    } catch {
      // Missing or unreadable: start afresh; the file is only a cache.
      this.entries = {};
    }
    return this.entries!;
  }
}

const sameFile = (a: FileStamp, b: FileStamp) =>
  a.ino === b.ino && a.ctimeMs === b.ctimeMs && a.mtimeMs === b.mtimeMs && a.size === b.size;

/** Of the program file itself (a symlink in node_modules/.bin is followed to the package's file). */
function statOf(path: string): FileStamp | undefined {
  try {
    const stat = statSync(path);
    return { ino: stat.ino, ctimeMs: stat.ctimeMs, mtimeMs: stat.mtimeMs, size: stat.size };
  } catch {
    return undefined;
  }
}
