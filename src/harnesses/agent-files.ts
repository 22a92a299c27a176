// Brain's own small files in a directory an agent can write too: a session's native dir is mounted read-write
// into the docker sandbox's and the docker harness's containers, and a CLI's files sit beside Brain's. What runs
// there may plant a symlink (or a FIFO) at any name, and Brain runs on the host, maybe as root: every read and
// write of such a file here refuses to follow a link, so a planted one cannot make the host read or overwrite a
// file outside the directory.
import { constants } from "node:fs";
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
    if (code === "ELOOP") throw new Error(`${file} is a symbolic link, not a file Brain wrote; remove it`);
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw new Error(`${file} is not a regular file, not one Brain wrote; remove it`);
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
