// The few file-system calls the event log makes, behind an interface so tests can inject disk failures.
// Raw fds with callback calls: measured a little cheaper than FileHandle per write+fdatasync, and no
// FileHandle objects left for the GC to close.
import fs from "node:fs";

export interface LogIO {
  open(path: string, flags: number, mode?: number): Promise<number>;
  /** Bytes read (may be short). */
  read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** Bytes written (may be short; the caller loops). */
  write(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  datasync(fd: number): Promise<void>;
  truncate(fd: number, length: number): Promise<void>;
  size(fd: number): Promise<number>;
  close(fd: number): Promise<void>;
  /** fsync of a directory, so a file created in it survives a crash. */
  syncDir(path: string): Promise<void>;
}

function call<T>(fn: (cb: (err: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

export const nodeLogIO: LogIO = {
  open: (path, flags, mode = 0o600) => call((cb) => fs.open(path, flags, mode, cb)),
  read: (fd, buffer, offset, length, position) =>
    call((cb) => fs.read(fd, buffer, offset, length, position, cb)),
  write: (fd, buffer, offset, length, position) =>
    call((cb) => fs.write(fd, buffer, offset, length, position, cb)),
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
