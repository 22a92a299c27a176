// A store's journal (journal.ts), and the replay of its home's journals of processes gone (journal-replay.ts),
// which every open of a log waits for: what a crash took from a log's file is in one of them.
import fs from "node:fs";
import nodePath from "node:path";
import { diskError, type StoreError } from "./errors.js";
import { Journal } from "./journal.js";
import { replayJournals } from "./journal-replay.js";
import { type LogIO, nodeLogIO } from "./log-io.js";

export class StoreJournal {
  /** The journal the store's logs commit through; undefined: each commit is a durable write of its own. */
  readonly journal: Journal | undefined;
  /** The io the store's logs write with: without O_DSYNC when the journal's write is the durable one. */
  readonly io: LogIO;
  /** The replay's failure, kept: it fails every open of a log. */
  private readonly replayed: Promise<StoreError | undefined>;

  constructor(home: string, io: LogIO, enabled: boolean) {
    const dir = nodePath.join(home, "journal");
    // Replayed even when this store writes none: another process (or an earlier run) may have.
    this.replayed = replayJournals(dir, io).then(
      () => undefined,
      (err: unknown) => diskError("replay the journals in", dir, err),
    );
    this.journal = enabled ? new Journal(dir, io) : undefined;
    // Its descriptors without O_DSYNC, an awaited commit alone is made durable by an fdatasync on the loop's thread
    // (InlineCommits): the journal is for commits of several logs at once. Not for an io that replaced datasync.
    const now = io.datasyncNow ?? (io.datasync === nodeLogIO.datasync ? fs.fdatasyncSync : undefined);
    this.io = enabled ? { ...io, syncWrites: false, ...(now ? { datasyncNow: now } : {}) } : io;
  }

  /** Resolves once the journals of processes gone are replayed; throws what their replay failed with. */
  async ready(): Promise<void> {
    const err = await this.replayed;
    if (err) throw err;
  }

  async close(): Promise<void> {
    await this.replayed;
    await this.journal?.close();
  }
}
