// The few file-system calls the event log makes, behind an interface so tests can inject disk failures.
// Raw fds with callback calls: measured a little cheaper than FileHandle per write+fdatasync, and no
// FileHandle objects left for the GC to close.
import fs from "node:fs";

export interface LogIO {
  /**
   * Whether the log opens its descriptors for writing with O_DSYNC, so that each write is durable when it
   * returns and a commit needs no fdatasync after it (see writeDurably). Honoured on Linux only.
   */
  readonly syncWrites: boolean;
  open(path: string, flags: number, mode?: number): Promise<number>;
  /** Bytes read (may be short). */
  read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** Bytes written (may be short; the caller loops). */
  write(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /**
   * Writes `buffers` one after the other from `position`, in one call (pwritev); bytes written (may be short; the
   * caller loops). Absent: each buffer goes through `write`.
   */
  writev?(fd: number, buffers: readonly Buffer[], position: number): Promise<number>;
  /**
   * The same write on the calling thread, blocking it until it returns (see InlineCommits). Absent: every write
   * goes through `write`.
   */
  writeNow?(fd: number, buffer: Buffer, offset: number, length: number, position: number): number;
  datasync(fd: number): Promise<void>;
  /**
   * fdatasync on the calling thread: how a write made with writeNow is made durable where the descriptor is not
   * O_DSYNC (a log writing through the store's journal). Absent: such a write is never made on the calling thread.
   */
  datasyncNow?(fd: number): void;
  truncate(fd: number, length: number): Promise<void>;
  size(fd: number): Promise<number>;
  close(fd: number): Promise<void>;
  /** fsync of a directory, so a file created in it survives a crash. */
  syncDir(path: string): Promise<void>;
}

function call<T>(fn: (cb: (err: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

/**
 * O_DSYNC makes write(2) return only once its data, and the metadata needed to read it back (the file's size),
 * are on stable storage: on Linux exactly the data-integrity completion of fdatasync, for the range written
 * (generic_write_sync runs the fdatasync path on it). Every byte of the log's file is written through such a
 * descriptor, and a truncate is still followed by its own fdatasync, so nothing else is ever dirty in it: the
 * write returning is as durable as write + fdatasync, in one trip through the thread pool instead of two. Linux
 * only: elsewhere libuv's fdatasync is stronger than O_DSYNC (F_FULLFSYNC on macOS), or O_DSYNC is missing.
 */
const syncFlag = process.platform === "linux" ? (fs.constants.O_DSYNC ?? 0) : 0;

/** The flags to open a log's file for writing with: `flags`, plus O_DSYNC where `io` writes through it. */
export function writeFlags(io: LogIO, flags: number): number {
  return io.syncWrites ? flags | syncFlag : flags;
}

/** Whether `io`'s writes are durable when they return (its descriptors opened with writeFlags). */
const writesAreDurable = (io: LogIO) => io.syncWrites && syncFlag !== 0;

export const nodeLogIO: LogIO = {
  syncWrites: syncFlag !== 0,
  open: (path, flags, mode = 0o600) => call((cb) => fs.open(path, flags, mode, cb)),
  read: (fd, buffer, offset, length, position) =>
    call((cb) => fs.read(fd, buffer, offset, length, position, cb)),
  write: (fd, buffer, offset, length, position) =>
    call((cb) => fs.write(fd, buffer, offset, length, position, cb)),
  writev: (fd, buffers, position) => call((cb) => fs.writev(fd, buffers as Buffer[], position, cb)),
  writeNow: (fd, buffer, offset, length, position) => fs.writeSync(fd, buffer, offset, length, position),
  datasync: (fd) => call<void>((cb) => fs.fdatasync(fd, (err) => cb(err, undefined))),
  truncate: (fd, length) => call<void>((cb) => fs.ftruncate(fd, length, (err) => cb(err, undefined))),
  size: (fd) => call<fs.Stats>((cb) => fs.fstat(fd, cb)).then((s) => s.size),
  close: (fd) => call<void>((cb) => fs.close(fd, (err) => cb(err, undefined))),
  syncDir: async (path) => {
    const fd = await call<number>((cb) => fs.open(path, fs.constants.O_RDONLY, cb));
    try {
      await call<void>((cb) => fs.fsync(fd, (err) => cb(err, undefined)));
    } finally {
      await call<void>((cb) => fs.close(fd, (err) => cb(err, undefined)));
    }
  },
};

/**
 * Waits for every step, then throws the first failure: nothing still writes into what the caller cleans up (nor
 * is cut back while a write into it runs).
 */
export async function allDone(steps: Promise<unknown>[]): Promise<void> {
  for (const result of await Promise.allSettled(steps)) if (result.status === "rejected") throw result.reason;
}

export async function readFully(io: LogIO, fd: number, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = await io.read(fd, buf, done, length - done, position + done);
    if (n === 0) return buf.subarray(0, done); // the file is shorter than we thought: let the parser say so
    done += n;
  }
  return buf;
}

export async function writeFully(io: LogIO, fd: number, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const n = await io.write(fd, buf, done, buf.length - done, position + done);
    if (n <= 0) throw new Error(`write returned ${n} at offset ${position + done}`); // would loop forever
    done += n;
  }
}

/**
 * Writes `bufs` one after the other from `position` and returns once they are durable: on a descriptor opened
 * with writeFlags where `io` writes through O_DSYNC, by the writes themselves, else by one fdatasync after them.
 * Several buffers (a turn's message, its text blocks as they are) go in one pwritev where `io` can: each O_DSYNC
 * write is a trip to the disk of its own, and a 7 MB message's dozen writes took 1.5-3 times as long as one.
 */
export async function writeDurably(
  io: LogIO,
  fd: number,
  bufs: Buffer | readonly Buffer[],
  position: number,
): Promise<void> {
  await writeAll(io, fd, bufs, position);
  if (!writesAreDurable(io)) await io.datasync(fd);
}

/** Writes `bufs` one after the other from `position` (in one pwritev where `io` can), durable or not as `fd` is. */
export async function writeAll(
  io: LogIO,
  fd: number,
  bufs: Buffer | readonly Buffer[],
  position: number,
): Promise<void> {
  if (!Buffer.isBuffer(bufs) && bufs.length > 1 && canWritev(io)) await writevFully(io, fd, bufs, position);
  else {
    for (const buf of Buffer.isBuffer(bufs) ? [bufs] : bufs) {
      await writeFully(io, fd, buf, position);
      position += buf.length;
    }
  }
}

/**
 * Whether `io` writes several buffers in one call: it has writev, and its writev is its own (not nodeLogIO's kept
 * by spreading it into an IO that replaced write, to inject faults), or its write is nodeLogIO's too.
 */
function canWritev(io: LogIO): boolean {
  return io.writev !== undefined && (io.writev !== nodeLogIO.writev || io.write === nodeLogIO.write);
}

async function writevFully(io: LogIO, fd: number, bufs: readonly Buffer[], position: number): Promise<void> {
  let rest = bufs;
  while (rest.length > 0) {
    const n = await io.writev!(fd, rest, position);
    if (n <= 0) throw new Error(`write returned ${n} at offset ${position}`); // would loop forever
    position += n;
    rest = after(rest, n);
  }
}

/** What is left of `bufs` once their first `n` bytes are written. */
export function after(bufs: readonly Buffer[], n: number): readonly Buffer[] {
  let i = 0;
  while (i < bufs.length && n >= bufs[i]!.length) n -= bufs[i++]!.length;
  if (i === bufs.length || n === 0) return bufs.slice(i);
  return [bufs[i]!.subarray(n), ...bufs.slice(i + 1)];
}

/**
 * Whether `io` can make a write durable on the calling thread: it has writeNow, its writes are durable when they
 * return or it has datasyncNow, and its writeNow is the same write as its write (not an IO that replaced write,
 * to inject faults, and kept nodeLogIO's writeNow by spreading it).
 */
export function canWriteNow(io: LogIO): boolean {
  return (writesAreDurable(io) || io.datasyncNow !== undefined) && writesNowAsWrite(io);
}

/** Whether `io` has writeNow and it is the same write as its write (see canWriteNow). */
const writesNowAsWrite = (io: LogIO) =>
  io.writeNow !== undefined && (io.writeNow !== nodeLogIO.writeNow || io.write === nodeLogIO.write);

/** Each of `bufs` written whole with `io`'s writeNow, one after the other from `position`. */
function writeAllWith(io: LogIO, fd: number, bufs: Buffer | readonly Buffer[], position: number): void {
  for (const buf of Buffer.isBuffer(bufs) ? [bufs] : bufs) {
    for (let done = 0; done < buf.length; ) {
      const n = io.writeNow!(fd, buf, done, buf.length - done, position + done);
      if (n <= 0) throw new Error(`write returned ${n} at offset ${position + done}`); // would loop forever
      done += n;
    }
    position += buf.length;
  }
}

/**
 * writeAll on the calling thread, for bytes that need no sync of their own (a log's file under the store's
 * journal, whose write is the durable one): into the page cache, microseconds, where a trip through the thread
 * pool costs two thread wake-ups (see inline-commits.ts) and, with a hundred logs committing, a hundred of them
 * per round on the loop's cores. Returns false, having written nothing, where `io` cannot (no writeNow, a write
 * replaced to inject faults) or its writes are O_DSYNC (each would block the loop for a trip to the disk).
 */
export function writeAllNow(
  io: LogIO,
  fd: number,
  bufs: Buffer | readonly Buffer[],
  position: number,
): boolean {
  if (writesAreDurable(io) || !writesNowAsWrite(io)) return false;
  writeAllWith(io, fd, bufs, position);
  return true;
}

/** writeDurably on the calling thread, for an `io` that canWriteNow. */
export function writeDurablyNow(
  io: LogIO,
  fd: number,
  bufs: Buffer | readonly Buffer[],
  position: number,
): void {
  if (!canWriteNow(io)) throw new Error("this LogIO cannot write durably on the calling thread");
  writeAllWith(io, fd, bufs, position);
  if (!writesAreDurable(io)) io.datasyncNow!(fd);
}
