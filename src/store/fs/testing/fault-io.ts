// A LogIO over the real files that counts calls, fails the next one of a kind, and holds the call that makes a
// commit durable: the log tests' disk faults, for either way the log makes a commit durable.
import { fdatasyncSync, writeSync } from "node:fs";
import { type LogIO, nodeLogIO } from "../log-io.js";

export type Op = "write" | "datasync" | "truncate";

function osError(code: string, syscall: string): NodeJS.ErrnoException {
  const text = code === "ENOSPC" ? "no space left on device" : "i/o error";
  return Object.assign(new Error(`${code}: ${text}, ${syscall}`), { code, syscall });
}

export interface TestIO extends LogIO {
  /** `now`: writes made on the calling thread (writeNow), which fail as `write` is told to. */
  counts: Record<Op | "now", number>;
  /** The call that makes a commit durable: its fdatasync, or its write where writes are O_DSYNC. */
  durable: Op;
  /** The flags of every open(). */
  flags: number[];
  /** The next call of `op` fails with `code`; a failing write first writes half its bytes, as a full disk does. */
  failNext(op: Op, code: string): void;
  /** Holds the next call of `durable` until the returned function is called. */
  holdDurable(): () => void;
}

/** The first `n` bytes of `bufs`. */
function firstBytes(bufs: readonly Buffer[], n: number): Buffer[] {
  const out: Buffer[] = [];
  for (const b of bufs) {
    if (n <= 0) break;
    out.push(b.subarray(0, n));
    n -= b.length;
  }
  return out;
}

/** Both ways a commit can be made durable: write + fdatasync (where O_DSYNC is not as strong), O_DSYNC write. */
export const MODES = [false, true] as const;

/** `writeNow`: the IO also writes on the calling thread (see InlineCommits), failing as its `write` does. */
export function testIO(syncWrites = false, { writeNow = false } = {}): TestIO {
  const failures = new Map<Op, string>();
  let hold: Promise<void> | undefined;
  const take = async (op: Op) => {
    io.counts[op]++;
    const code = failures.get(op);
    failures.delete(op);
    if (op === io.durable) {
      const wait = hold;
      hold = undefined;
      if (wait) await wait;
    }
    return code;
  };
  const io: TestIO = {
    ...nodeLogIO,
    // Where O_DSYNC is not honoured (not Linux) both modes are write + fdatasync.
    syncWrites: syncWrites && nodeLogIO.syncWrites,
    durable: syncWrites && nodeLogIO.syncWrites ? "write" : "datasync",
    flags: [],
    counts: { write: 0, datasync: 0, truncate: 0, now: 0 },
    failNext: (op, code) => failures.set(op, code),
    holdDurable() {
      let release!: () => void;
      hold = new Promise((r) => {
        release = r;
      });
      return release;
    },
    open(p, flags, mode) {
      io.flags.push(flags);
      return nodeLogIO.open(p, flags, mode);
    },
    async write(fd, buffer, offset, length, position) {
      const code = await take("write");
      if (code) {
        await nodeLogIO.write(fd, buffer, offset, Math.floor(length / 2), position);
        throw osError(code, "write");
      }
      return nodeLogIO.write(fd, buffer, offset, length, position);
    },
    /** As `write`, for a commit of several buffers (a message written from its blocks). */
    async writev(fd, buffers, position) {
      const code = await take("write");
      if (code) {
        const total = buffers.reduce((n, b) => n + b.length, 0);
        await nodeLogIO.writev!(fd, firstBytes(buffers, Math.floor(total / 2)), position);
        throw osError(code, "write");
      }
      return nodeLogIO.writev!(fd, buffers, position);
    },
    ...(writeNow
      ? {
          writeNow(fd: number, buffer: Buffer, offset: number, length: number, position: number) {
            io.counts.now++;
            const code = failures.get("write");
            failures.delete("write");
            if (code) {
              writeSync(fd, buffer, offset, Math.floor(length / 2), position);
              throw osError(code, "write");
            }
            return writeSync(fd, buffer, offset, length, position);
          },
        }
      : { writeNow: undefined }),
    // With writes O_DSYNC, an fdatasync on the calling thread too: a store writing through its journal turns
    // O_DSYNC off and makes an awaited commit alone durable with it (store-journal.ts).
    ...(writeNow && syncWrites && nodeLogIO.syncWrites
      ? {
          datasyncNow(fd: number) {
            io.counts.datasync++;
            const code = failures.get("datasync");
            failures.delete("datasync");
            if (code) throw osError(code, "fdatasync");
            fdatasyncSync(fd);
          },
        }
      : {}),
    async datasync(fd) {
      const code = await take("datasync");
      if (code) throw osError(code, "fdatasync");
      return nodeLogIO.datasync(fd);
    },
    async truncate(fd, length) {
      const code = await take("truncate");
      if (code) throw osError(code, "ftruncate");
      return nodeLogIO.truncate(fd, length);
    },
  };
  return io;
}
