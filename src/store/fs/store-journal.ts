// A store's journal (journal.ts), and the replay of its home's journals of processes gone (journal-replay.ts),
// which every open of a log waits for (or performs): what a crash took from a log's file is in one of them.
import fs from "node:fs";
import nodePath from "node:path";
import { diskError } from "./errors.js";
import { Journal } from "./journal.js";
import { type KeptJournals, replayJournals, replayOwn } from "./journal-replay.js";
import { type LogIO, nodeLogIO } from "./log-io.js";

export class StoreJournal {
  /** The journal the store's logs commit through; undefined: each commit is a durable write of its own. */
  readonly journal: Journal | undefined;
  /** The io the store's logs write with: without O_DSYNC when the journal's write is the durable one. */
  readonly io: LogIO;
  private readonly dir: string;
  /** The io the journals are replayed with: the store's own. */
  private readonly replayIo: LogIO;
  /** The journals this store's replays kept, and their logs: an open of another log skips them. */
  private readonly kept: KeptJournals = new Map();

  constructor(home: string, io: LogIO, enabled: boolean) {
    this.dir = nodePath.join(home, "journal");
    this.replayIo = io;
    this.journal = enabled ? new Journal(this.dir, io) : undefined;
    // Its descriptors without O_DSYNC, an awaited commit alone is made durable by an fdatasync on the loop's thread
    // (InlineCommits): the journal is for commits of several logs at once. Not for an io that replaced datasync.
    const now = io.datasyncNow ?? (io.datasync === nodeLogIO.datasync ? fs.fdatasyncSync : undefined);
    const logIo = { ...io, syncWrites: false, ...(now ? { datasyncNow: now } : {}) };
    this.io = this.journal ? watchSyncs(logIo, this.journal) : io;
  }

  /**
   * Resolves once the journals of processes gone are replayed (even when this store writes none: another process
   * or an earlier run may have); throws what their replay failed with. At every open of a log, once its lock is
   * held (`held`, the log's path): a journal's process may have died since the last open, or since the look.
   */
  ready = async (held?: string): Promise<void> => {
    try {
      const own = this.journal && nodePath.basename(this.journal.path);
      await replayJournals(this.dir, this.replayIo, own, held, this.kept);
      if (held !== undefined && this.journal?.unsyncedLog(held))
        await replayOwn(this.journal.path, this.replayIo, held);
    } catch (err) {
      throw diskError("replay the journals in", this.dir, err);
    }
  };

  async close(): Promise<void> {
    await this.journal?.close();
  }
}

/**
 * `io`, telling `journal` of every failed sync of a file it opened (Journal.poison), with the file's path: a log's
 * sync fails as it saves its state, seals a segment, commits alone (datasyncNow) or is synced for a cut, and the
 * next sync of it may succeed without the bytes the failed one dropped.
 */
function watchSyncs(io: LogIO, journal: Journal): LogIO {
  const paths = new Map<number, string>();
  const watched = <T>(fd: number, sync: () => T): T => {
    try {
      const done = sync();
      return done instanceof Promise ? (done.catch((err: unknown) => fail(fd, err)) as T) : done;
    } catch (err) {
      return fail(fd, err);
    }
  };
  const fail = (fd: number, err: unknown): never => {
    journal.poison(paths.get(fd), err);
    throw err;
  };
  const { datasyncNow } = io;
  return {
    ...io,
    open: async (path, flags, mode) => {
      const fd = await io.open(path, flags, mode);
      paths.set(fd, path);
      return fd;
    },
    close: (fd) => {
      paths.delete(fd);
      return io.close(fd);
    },
    datasync: (fd) => watched(fd, () => io.datasync(fd)),
    ...(datasyncNow ? { datasyncNow: (fd: number) => watched(fd, () => datasyncNow(fd)) } : {}),
  };
}
