import { createHash } from "node:crypto";
import { closeSync, fsync, open, openSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { CheckpointError, errnoCode } from "./errors.js";
import { type SecretHit, SecretScanner } from "./secret-scan.js";
import { tempName } from "./temps.js";

const CHUNK = 1 << 20;

/** The range ended before `end`: the file shrank under us. */
export class ShortReadError extends Error {
  constructor(readonly at: number) {
    super(`unexpected end of file at byte ${at}`);
  }
}

/**
 * Reads [start, end) of `fh` at explicit positions, in chunks, never the whole file. The chunk buffer is
 * reused: `onChunk` must copy what it keeps.
 */
export async function readRange(
  fh: FileHandle,
  start: number,
  end: number,
  onChunk: (chunk: Buffer, pos: number) => void | Promise<void>,
): Promise<void> {
  const buf = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, end - start)));
  for (let pos = start; pos < end; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, end - pos), pos);
    if (bytesRead === 0) throw new ShortReadError(pos);
    await onChunk(buf.subarray(0, bytesRead), pos);
    pos += bytesRead;
  }
}

export async function hashRange(fh: FileHandle, start: number, end: number): Promise<string> {
  const hash = createHash("sha256");
  await readRange(fh, start, end, (chunk) => {
    hash.update(chunk);
  });
  return hash.digest("hex");
}

/**
 * Reads [scanFrom, end): searches it for the secrets (raw and JSON-escaped, across chunk boundaries) and hashes the
 * part from `hashFrom` on. One pass serves both the secret scan and the content hash of the new bytes.
 */
export async function inspectRange(
  fh: FileHandle,
  scanFrom: number,
  hashFrom: number,
  end: number,
  secrets: Buffer[],
): Promise<{ sha256: string; hit?: SecretHit }> {
  const hash = createHash("sha256");
  const scan = new SecretScanner(secrets);
  await readRange(fh, scanFrom, end, (chunk, pos) => {
    if (pos + chunk.length > hashFrom) hash.update(chunk.subarray(Math.max(0, hashFrom - pos)));
    scan.push(chunk, pos);
  });
  scan.end();
  return scan.hit ? { sha256: hash.digest("hex"), hit: scan.hit } : { sha256: hash.digest("hex") };
}

// Brain's own checkpoint files and directories are opened, closed, renamed and stat'ed on the calling thread:
// each call through the thread pool is two hand-offs between threads (measured on a busy 2-vCPU VM at about
// 0.1-0.5 ms a round, see src/store/fs/inline-commits.ts), and a small checkpoint made some forty of them one
// after the other, most of its time. These are metadata calls of microseconds on the disk Brain's logs live on
// (whose commits are written on the calling thread too). The fsyncs, and reads and writes of the native files'
// bytes, which a stalling disk can make long, stay on the pool.
const fsyncAsync = promisify(fsync);
const openAsync = promisify(open);

/**
 * Makes a rename or a new entry in `dir` durable. Windows cannot open directories: nothing to do there. `caller`:
 * `dir` is of the caller's choosing (a restore's), which may sit on a network mount or be a FIFO swapped in: it is
 * opened on the thread pool, as an open that hangs there would otherwise stop the daemon's loop for everyone.
 */
export async function fsyncDir(dir: string, caller = false): Promise<void> {
  let fd: number | undefined;
  try {
    fd = caller ? await openAsync(dir, "r") : openSync(dir, "r");
    await fsyncAsync(fd);
  } catch (err) {
    if (!["EISDIR", "EPERM", "EACCES", "EINVAL"].includes(errnoCode(err) ?? "")) throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A file written and fsynced under a temp name, not yet visible under its own. */
export interface StagedFile {
  /** rename + dir fsync: readers see the old file or the whole new one, even after a crash. */
  commit(): Promise<void>;
  /** Removes the temp, when what the file would point at could not be stored. */
  discard(): Promise<void>;
}

/** The first half of writeFileDurable, so the fsync of the file can overlap other work that must precede it. */
export async function stageFileDurable(file: string, data: string): Promise<StagedFile> {
  const tmp = `${file}.${tempName("tmp")}`;
  const discard = async () => {
    try {
      unlinkSync(tmp);
    } catch {}
  };
  try {
    const fd = openSync(tmp, "wx", 0o600);
    try {
      // A manifest or a marker: small, written at once like a log's inline commit; only its fsync waits.
      const bytes = Buffer.from(data, "utf8");
      for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
      await fsyncAsync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    await discard();
    throw err;
  }
  return {
    discard,
    async commit() {
      try {
        renameSync(tmp, file);
      } catch (err) {
        await discard();
        throw err;
      }
      await fsyncDir(path.dirname(file));
    },
  };
}

/** temp + fsync + rename + dir fsync: readers see the old file or the whole new one, even after a crash. */
export async function writeFileDurable(file: string, data: string): Promise<void> {
  await (await stageFileDurable(file, data)).commit();
}

/** True when `file` exists with exactly `size` bytes. */
export async function hasSize(file: string, size: number): Promise<boolean> {
  try {
    return statSync(file).size === size;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return false;
    throw err;
  }
}

/** write(2) may write less than asked: loop until the whole chunk is at `position`. */
export async function writeAll(fh: FileHandle, chunk: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < chunk.length; ) {
    const { bytesWritten } = await fh.write(chunk, done, chunk.length - done, position + done);
    done += bytesWritten;
  }
}

/** The unit of writeSparse: a page, the least a file system allocates. */
const PAGE = 4096;
const ZEROS = Buffer.alloc(PAGE);

/**
 * writeAll, leaving out the pages of `chunk` that are all zeros: into a file made for the purpose (they read as
 * zeros there already), a sparse native file (`truncate -s 1T`, which costs its agent no disk) then costs no
 * more disk stored or restored than it did where it was. The writer sets the file's size at the end.
 */
export async function writeSparse(fh: FileHandle, chunk: Uint8Array, position: number): Promise<void> {
  for (let at = 0; at < chunk.length; ) {
    // Pages are counted from the file's start, so a hole left is a whole page of the file.
    const end = Math.min(chunk.length, at + PAGE - ((position + at) % PAGE));
    const page = chunk.subarray(at, end);
    if (ZEROS.compare(page, 0, page.length, 0, page.length) !== 0) await writeAll(fh, page, position + at);
    at = end;
  }
}

/** Chunks the object store is sent at a time: it publishes 128 KiB messages, and asks for more as it sends. */
const SEND_CHUNK = 128 * 1024;

/** The file as a stream that reads the next chunk only when asked (the caller closes the handle). */
export function readStream(handle: FileHandle): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const buf = Buffer.allocUnsafe(SEND_CHUNK);
        const { bytesRead } = await handle.read(buf, 0, SEND_CHUNK, null);
        if (bytesRead === 0) controller.close();
        else controller.enqueue(buf.subarray(0, bytesRead));
      },
    },
    { highWaterMark: 0 },
  );
}

/** `next`, or a refusal naming the object when nothing came in `ms`. */
export async function beforeDeadline<T>(next: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const why = `NATS delivered no chunk of object ${name} for ${ms / 1000} s (removed meanwhile?)`;
      reject(
        new CheckpointError("brain_error", `restore failed: ${why}; check the checkpoint bucket and retry`),
      );
    }, ms);
  });
  try {
    return await Promise.race([next, late]);
  } finally {
    clearTimeout(timer);
  }
}
