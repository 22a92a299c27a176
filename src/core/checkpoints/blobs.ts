import { createHash } from "node:crypto";
import { renameSync } from "node:fs";
import { type FileHandle, open, unlink } from "node:fs/promises";
import path from "node:path";
import { CheckpointError, errnoCode } from "./errors.js";
import { hasSize, readRange, writeSparse } from "./io.js";
import { tempName } from "./temps.js";

/** Test seam: lets a test fail a blob write at the worst moment (written and fsynced, not yet renamed). */
export interface BlobHooks {
  beforeBlobCommit?(blob: string): void | Promise<void>;
}

/**
 * Stores bytes [start, end) of `src` as blob `<blobsDir>/<sha256>`. Content addressing makes an unchanged
 * file or segment free. The bytes are hashed again while copied: if they differ from what was validated
 * (the file changed mid-checkpoint), nothing is committed.
 */
export async function storeBlob(
  blobsDir: string,
  src: FileHandle,
  start: number,
  end: number,
  sha256: string,
  label: string,
  hooks: BlobHooks = {},
): Promise<void> {
  const final = path.join(blobsDir, sha256);
  if (await hasSize(final, end - start)) return;
  const tmp = path.join(blobsDir, `.${tempName("tmp")}`);
  try {
    const out = await open(tmp, "wx", 0o600);
    const hash = createHash("sha256");
    try {
      await readRange(src, start, end, async (chunk, pos) => {
        hash.update(chunk);
        await writeSparse(out, chunk, pos - start);
      });
      // Zero pages at the end were left out: the blob is as long as its bytes all the same.
      await out.truncate(end - start);
      await out.sync();
    } finally {
      await out.close();
    }
    if (hash.digest("hex") !== sha256) {
      throw new CheckpointError(
        "brain_error",
        `checkpoint failed: native file ${JSON.stringify(label)} changed while it was being checkpointed; ` +
          "checkpoint only after the turn has settled",
        label,
      );
    }
    await hooks.beforeBlobCommit?.(sha256);
    renameSync(tmp, final); // on the calling thread, as Brain's own checkpoint files' metadata (see io.ts)
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/**
 * Writes blob `blob` (which must hold `length` bytes hashing to `sha256`) into `out` at `offset`, verifying
 * both on the way: a damaged store fails the restore with the blob's name.
 */
export async function copyBlobInto(
  blobsDir: string,
  blob: { blob: string; offset: number; length: number; sha256: string },
  out: FileHandle,
  label: string,
  checkpoint: string,
): Promise<void> {
  const damaged = (why: string) =>
    new CheckpointError(
      "brain_error",
      `restore failed: checkpoint ${checkpoint} is damaged: blob ${blob.blob} (for ${JSON.stringify(label)}) ${why}; ` +
        "nothing was restored: restore or fork another checkpoint of the session",
      label,
    );
  let src: FileHandle;
  try {
    src = await open(path.join(blobsDir, blob.blob), "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") throw damaged("is missing from the checkpoint store");
    throw err;
  }
  try {
    const size = (await src.stat()).size;
    if (size !== blob.length) throw damaged(`is ${size} bytes, the manifest expects ${blob.length}`);
    const hash = createHash("sha256");
    await readRange(src, 0, blob.length, async (chunk, pos) => {
      hash.update(chunk);
      await writeSparse(out, chunk, blob.offset + pos);
    });
    const actual = hash.digest("hex");
    if (actual !== blob.sha256)
      throw damaged(`is corrupted: its sha256 is ${actual}, expected ${blob.sha256}`);
  } finally {
    await src.close();
  }
}
