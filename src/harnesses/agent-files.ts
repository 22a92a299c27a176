// Brain's own small files in a directory an agent can write too: a session's native dir is mounted read-write
// into the docker sandbox's and the docker harness's containers, and a CLI's files sit beside Brain's. What runs
// there may plant a symlink (or a FIFO) at any name, and Brain runs on the host, maybe as root: every read and
// write of such a file here refuses to follow a link, so a planted one cannot make the host read or overwrite a
// file outside the directory.
//
// Not only the file's own name: a directory on the way (`<native>/.codex`) swapped for a link to `/etc` would
// carry the write out just as well. So each is given as a path relative to a root Brain made itself (the
// native dir, an endpoint's private dir), which the agent can write into but not replace, and the path is
// walked from there one directory at a time, each opened without following a link, the next looked up in the
// one already open (`/proc/self/fd/<fd>/<name>`, Node's stand-in for openat). Where there is no /proc (not
// Linux) the path is used as it is, guarding the file's own name only.
//
// Brain may run as root and the program as another user (a dev container's remoteUser): what Brain makes would
// stay root's, a directory the program cannot write into, a 0600 config it cannot read. So what makes something
// takes an optional owner and hands it what it makes, through the descriptor held open (never a name followed).
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fchownSync,
  fstatSync,
  ftruncateSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import { fdPath } from "../core/checkpoints/opened.js";
import type { ContainerUser } from "../core/harness.js";

const DIRECTORY = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | constants.O_NOFOLLOW;

/** A file's directory, held open while the file is read or written, and the names to use for it. */
interface OpenedDir {
  /** A path naming the opened directory itself, whatever its old name points at now. */
  path: string;
  /** What the messages call the file: root + relative path, as the caller knows it. */
  shown: string;
  name: string;
  close(): void;
}

/**
 * The parts of `path` under the root: relative to it, or absolute and inside it. One that could leave the root
 * is refused.
 */
function parts(root: string, path: string): string[] {
  const inside = isAbsolute(path) ? relative(root, path) : normalize(path);
  if (
    inside === "" ||
    inside === "." ||
    inside === ".." ||
    inside.startsWith(`..${sep}`) ||
    isAbsolute(inside)
  ) {
    throw new Error(`${path} is not a path inside ${root}; give one under it, without ".."`);
  }
  return inside.split(sep).filter((p) => p !== "");
}

/**
 * Opens the directories of `path` from `root`, one at a time and none through a link; with `create`,
 * makes those missing. The last part is the file's name, left to the caller. Undefined when a directory is
 * missing and not to be made.
 */
function openParent(
  root: string,
  path: string,
  create: boolean,
  owner?: ContainerUser,
): OpenedDir | undefined {
  const names = parts(root, path);
  const name = names.pop()!;
  const dir = openDirs(root, names, create, owner);
  return dir && { ...dir, shown: isAbsolute(path) ? path : join(root, path), name };
}

/** With `owner`, the directories made (`first` made and those under it) are handed to it; others keep theirs. */
function openDirs(root: string, names: string[], create: boolean, owner?: ContainerUser) {
  if (!existsSync("/proc/self/fd")) {
    const dir = join(root, ...names);
    const first = create ? mkdirSync(dir, { recursive: true }) : undefined;
    for (let made = dir; owner && first && made.length >= first.length; made = join(made, ".."))
      lchownSync(made, owner.uid, owner.gid);
    return { path: dir, close: () => {} };
  }
  // The root is Brain's own: it may be reached through links of the host's (a /tmp that is one).
  let fd = openSync(root, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  try {
    for (let i = 0; i < names.length; i++) {
      const next = `${fdPath(fd)}/${names[i]}`;
      const here = join(root, ...names.slice(0, i + 1));
      let child = openDir(next, here);
      if (child === undefined) {
        if (!create) {
          closeSync(fd);
          return undefined;
        }
        let ours = true;
        try {
          mkdirSync(next, 0o755);
        } catch (made) {
          // Made meanwhile (the agent, another writer): opened below like any other, a link refused as ever.
          if ((made as NodeJS.ErrnoException).code !== "EEXIST") throw made;
          ours = false;
        }
        child = openDir(next, here) ?? openSync(next, DIRECTORY); // gone again: its ENOENT, as it is
        if (ours && owner) fchownSync(child, owner.uid, owner.gid);
      }
      closeSync(fd);
      fd = child;
    }
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  const held = fd;
  return { path: fdPath(held), close: () => closeSync(held) };
}

/**
 * Opens the directory at `path` (`shown` in messages) without following a link; undefined when there is none.
 * A link or anything but a directory there is refused.
 */
function openDir(path: string, shown: string): number | undefined {
  try {
    return openSync(path, DIRECTORY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    // O_DIRECTORY on a link answers ENOTDIR before O_NOFOLLOW's ELOOP: tell the two apart.
    if (code === "ELOOP" || (code === "ENOTDIR" && lstatSync(path).isSymbolicLink()))
      throw plantedLink(shown);
    if (code === "ENOTDIR") throw notDirectory(shown);
    throw err;
  }
}

/** O_NONBLOCK: a FIFO planted at the name would otherwise block the open until someone writes to it. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** An open for reading that failed: no file is undefined; a link at the name, or anything else, is an error. */
function noFileOr(err: unknown, shown: string): undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return undefined;
  if (code === "ELOOP") throw plantedLink(shown);
  throw err;
}

/**
 * The file's text, or undefined when there is none. A symlink or anything but a regular file at the name, or a
 * link for a directory on the way, is an error: an agent put it there, and what it points at is none of the
 * session's.
 */
export async function readAgentFile(root: string, path: string): Promise<string | undefined> {
  const dir = openParent(root, path, false);
  if (!dir) return undefined;
  try {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(join(dir.path, dir.name), READ_FLAGS);
    } catch (err) {
      return noFileOr(err, dir.shown);
    }
    try {
      if (!(await handle.stat()).isFile()) throw notRegular(dir.shown);
      return await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } finally {
    dir.close();
  }
}

/**
 * readAgentFile for what runs synchronously (a CLI's files looked at as it starts): the file's text, or its first
 * `limit` bytes, or undefined when there is none. Refused alike: a link at the name or for a directory on the way,
 * and anything but a regular file (a FIFO planted there would stop the daemon's event loop until written to).
 */
export function readAgentFileSync(root: string, path: string, limit?: number): string | undefined {
  const dir = openParent(root, path, false);
  if (!dir) return undefined;
  try {
    let fd: number;
    try {
      fd = openSync(join(dir.path, dir.name), READ_FLAGS);
    } catch (err) {
      return noFileOr(err, dir.shown);
    }
    try {
      if (!fstatSync(fd).isFile()) throw notRegular(dir.shown);
      if (limit === undefined) return readFileSync(fd, "utf8");
      const buf = Buffer.alloc(limit);
      return buf.toString("utf8", 0, readSync(fd, buf, 0, limit, 0));
    } finally {
      closeSync(fd);
    }
  } finally {
    dir.close();
  }
}

/**
 * Replaces the file's content: written to `<name>.tmp` and renamed over it, so a reader sees the old file or the
 * whole new one. The temporary name is created afresh (O_EXCL: never opened through a link planted there) and
 * the rename replaces a link at the name itself rather than writing through it. Missing directories are made.
 */
export async function replaceAgentFile(
  root: string,
  path: string,
  data: string,
  owner?: ContainerUser,
): Promise<void> {
  const dir = openParent(root, path, true, owner)!;
  try {
    const file = join(dir.path, dir.name);
    const tmp = `${file}.tmp`;
    await unlink(tmp).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
    const handle = await open(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o644,
    );
    try {
      if (owner) await handle.chown(owner.uid, owner.gid);
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } finally {
    dir.close();
  }
}

/**
 * Writes the file in place, synchronously (for a config a CLI reads as it starts), never through a link planted
 * at its name or for a directory on the way: a symlink is refused, and so is anything but a regular file.
 * Missing directories are made. A `mode` given is set even on a file that was there before with another;
 * without one, a file there keeps its own. An `owner` given is the file's, and the directories' made for it.
 */
export function writeAgentFileSync(
  root: string,
  path: string,
  data: string,
  mode?: number,
  owner?: ContainerUser,
): void {
  const dir = openParent(root, path, true, owner)!;
  try {
    let fd: number;
    try {
      // O_NONBLOCK: opening a FIFO planted at the name for writing fails at once instead of waiting for a reader.
      fd = openSync(
        join(dir.path, dir.name),
        constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        mode ?? 0o644,
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") throw plantedLink(dir.shown);
      // A FIFO with no reader.
      if (code === "ENXIO") throw notRegular(dir.shown);
      throw err;
    }
    try {
      if (!fstatSync(fd).isFile()) throw notRegular(dir.shown);
      if (mode !== undefined) fchmodSync(fd, mode);
      if (owner) fchownSync(fd, owner.uid, owner.gid);
      // Truncated only once known to be a regular file of its own.
      ftruncateSync(fd, 0);
      writeFileSync(fd, data);
    } finally {
      closeSync(fd);
    }
  } finally {
    dir.close();
  }
}

/**
 * Ends the file's last line when something cut it short (its writer killed mid-write, a full disk): the next line
 * appended would otherwise join the torn one and be lost with it. Only a newline is added, so the file still only
 * grows. True when one was; false when the file is missing, empty or ends whole. Refused like writeAgentFileSync.
 */
export function endAgentFileLineSync(root: string, path: string): boolean {
  const dir = openParent(root, path, false);
  if (!dir) return false;
  try {
    let fd: number;
    try {
      fd = openSync(join(dir.path, dir.name), constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return false;
      if (code === "ELOOP") throw plantedLink(dir.shown);
      if (code === "ENXIO") throw notRegular(dir.shown);
      throw err;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw notRegular(dir.shown);
      const size = st.size;
      const last = Buffer.alloc(1);
      if (size === 0 || (readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 0x0a)) return false;
      writeSync(fd, "\n", size);
      return true;
    } finally {
      closeSync(fd);
    }
  } finally {
    dir.close();
  }
}

/**
 * `mkdir -p` of a directory under the root, never through a link planted for one on the way. With `owner`, the
 * directories made are handed to it.
 */
export function makeAgentDirSync(root: string, path: string, owner?: ContainerUser): void {
  openDirs(root, parts(root, path), true, owner)?.close();
}

/**
 * Moves a file or directory from one path under the root to another (a rename: the same file system), never
 * through a link for a directory on the way; the directories to `to` are made. A link at either name is moved
 * or replaced itself, never followed. With `owner`, the directories made and what was moved (itself, not what a
 * directory holds) are handed to it: a transcript moved into a folder of root's would leave the program unable
 * to write beside it, or to it when the restore left it root's.
 */
export function moveAgentFileSync(root: string, from: string, to: string, owner?: ContainerUser): void {
  const source = openParent(root, from, false);
  if (!source) throw Object.assign(new Error(`${from}: no such file`), { code: "ENOENT" });
  try {
    const target = openParent(root, to, true, owner)!;
    try {
      const moved = join(target.path, target.name);
      renameSync(join(source.path, source.name), moved);
      // lchown: the name is looked up in the directory held open, and a link there is changed, not followed.
      if (owner) lchownSync(moved, owner.uid, owner.gid);
    } finally {
      target.close();
    }
  } finally {
    source.close();
  }
}

// What is at the name is not Brain's: something that runs in the directory put it there.
const plantedLink = (file: string) =>
  new Error(`${file} is a symbolic link, not a file Brain wrote; remove it`);
const notRegular = (file: string) =>
  new Error(`${file} is not a regular file, not one Brain wrote; remove it`);
const notDirectory = (dir: string) => new Error(`${dir} is not a directory, not one Brain made; remove it`);
