// Brain's own small files in a directory an agent can write too: a session's native dir is mounted read-write
// into the docker sandbox's and the docker harness's containers, and a CLI's files sit beside Brain's. What runs
// there may plant a symlink (or a FIFO) at any name, and Brain runs on the host, maybe as root: every read and
// write of such a file here refuses to follow a link, so a planted one cannot make the host read or overwrite a
// file outside the directory.
import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, writeFileSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";

/**
 * The file's text, or undefined when there is none. A symlink or anything but a regular file at `file` is an
 * error: an agent put it there, and what it points at is none of the session's.
 */
export async function readAgentFile(file: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: a FIFO planted at the name would otherwise block the open until someone writes to it.
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw plantedLink(file);
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw notRegular(file);
    }
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Replaces the file's content: written to `<file>.tmp` and renamed over it, so a reader sees the old file or the
 * whole new one. The temporary name is created afresh (O_EXCL: never opened through a link planted there) and
 * the rename replaces a link at `file` itself rather than writing through it.
 */
export async function replaceAgentFile(file: string, data: string): Promise<void> {
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
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}

/**
 * Writes the file in place, synchronously (for a config a CLI reads as it starts), never through a link planted
 * at `file`: a symlink there is refused, and so is anything but a regular file. A `mode` given is set even on a
 * file that was there before with another; without one, a file there keeps its own.
 */
export function writeAgentFileSync(file: string, data: string, mode?: number): void {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO planted at the name for writing fails at once instead of waiting for a reader.
    fd = openSync(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      mode ?? 0o644,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw plantedLink(file);
    // A FIFO with no reader.
    if (code === "ENXIO") throw notRegular(file);
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw notRegular(file);
    if (mode !== undefined) fchmodSync(fd, mode);
    // Truncated only once known to be a regular file of its own.
    ftruncateSync(fd, 0);
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

// What is at the name is not Brain's: something that runs in the directory put it there.
const plantedLink = (file: string) =>
  new Error(`${file} is a symbolic link, not a file Brain wrote; remove it`);
const notRegular = (file: string) =>
  new Error(`${file} is not a regular file, not one Brain wrote; remove it`);
