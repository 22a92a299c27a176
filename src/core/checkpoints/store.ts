import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { NativeFile } from "../../protocol/runner.js";
import type { Secret } from "../redact.js";
import { type BlobHooks, storeBlob } from "./blobs.js";
import { CheckpointError, errnoCode, isDiskFull } from "./errors.js";
import { fsyncDir, stageFileDurable } from "./io.js";
import { type CheckpointFile, type CheckpointManifest, parseManifest } from "./manifest.js";
import { type PlannedFile, planCheckpoint, reopenPlanned } from "./plan.js";
import { restoreManifest } from "./restore.js";
import { removeDeadTemps } from "./temps.js";

/** Test seams: fault injection, and a moment to change the native dir between planning and storing. */
export interface CheckpointHooks extends BlobHooks {
  /** After every file was checked and hashed (and closed), before any is opened again to be stored. */
  afterPlan?(): void | Promise<void>;
}

export interface CheckpointStoreOptions {
  hooks?: CheckpointHooks;
}

export interface CreateOptions {
  /**
   * Credentials no native file may contain (the provider key, whatever the session's log redacts); a refusal
   * names the one found. Empty values are ignored.
   */
  secrets?: readonly Secret[];
  /** The session whose native state this is: a credential's refusal names its rebuild, the way on from there. */
  session?: string;
  /**
   * The checkpoint whose stored bytes append-only files are taken to begin with (only what grew since is stored):
   * by default the latest, none (null) stores every file whole. Only a checkpoint the native dir was made into or
   * restored from is sound: its files are compared only at their first and last bytes, so another's middle bytes
   * (a cluster node's never-logged checkpoint, numbered last) would be kept in place of the native dir's own.
   */
  base?: string | null;
}

/** What the host and a session use of one session's checkpoints: a CheckpointStore, or a store's own (cluster). */
export type Checkpoints = Pick<CheckpointStore, "create" | "list" | "get" | "restore" | "nativeFiles">;

const MANIFEST = /^(\d{6,})\.json$/;

/**
 * The checkpoints of one session: `<dir>/<id>.json` manifests over content-addressed `<dir>/blobs/<sha256>`.
 * Append-only files are stored incrementally (one segment per checkpoint that grew them), other files whole.
 */
export class CheckpointStore {
  readonly blobsDir: string;
  // create() reads the latest manifest and writes the next id: one at a time, or two would take the same id.
  private tail: Promise<unknown> = Promise.resolve();
  /** Whether this store has removed the temps a writer killed mid-checkpoint left (once: a directory read each). */
  private swept = false;

  constructor(
    readonly dir: string,
    private readonly options: CheckpointStoreOptions = {},
  ) {
    this.blobsDir = path.join(dir, "blobs");
  }

  create(nativeDir: string, files: NativeFile[], opts: CreateOptions = {}): Promise<CheckpointManifest> {
    const run = this.tail.then(() => this.createNow(nativeDir, files, opts));
    this.tail = run.catch(() => {});
    return run;
  }

  private async createNow(
    nativeDir: string,
    files: NativeFile[],
    opts: CreateOptions,
  ): Promise<CheckpointManifest> {
    const secrets = (opts.secrets ?? [])
      .filter((s) => s.value.length > 0)
      .map((s) => ({ name: s.name, bytes: Buffer.from(s.value, "utf8") }));
    const ids = await this.list();
    const lastId = ids.at(-1);
    const baseId = opts.base === undefined ? lastId : (opts.base ?? undefined);
    // A damaged base manifest (hand-edited, a failing disk) must not block every later checkpoint: nothing of it is
    // needed, as a new checkpoint compared with none stores each file whole instead of only what grew since.
    const previous =
      baseId === undefined
        ? undefined
        : await this.read(baseId).catch((err: unknown) => {
            if (err instanceof CheckpointError || (opts.base !== undefined && errnoCode(err) === "ENOENT")) {
              return undefined;
            }
            throw err;
          });
    const planned = await planCheckpoint(nativeDir, files, previous, secrets, opts.session);
    await this.options.hooks?.afterPlan?.();
    return this.store(planned, lastId).catch((err: unknown) => {
      throw notStored(err);
    });
  }

  /** Writes the planned files' new bytes as blobs, then the manifest that makes them checkpoint `lastId` + 1. */
  private async store(planned: PlannedFile[], lastId: string | undefined): Promise<CheckpointManifest> {
    await this.ensureDirs();
    if (!this.swept) {
      this.swept = true;
      await removeDeadTemps(this.blobsDir);
      await removeDeadTemps(this.dir);
    }
    const id = String(lastId === undefined ? 1 : Number(lastId) + 1).padStart(6, "0");
    const manifest: CheckpointManifest = {
      id,
      created_at: new Date().toISOString(),
      files: planned.map(entryOf),
    };
    // The manifest says only what the plan already knows, so its write and fsync overlap the blobs'; it is renamed
    // into place only after every blob it points at is durable.
    const staging = stageFileDurable(
      path.join(this.dir, `${id}.json`),
      `${JSON.stringify(manifest, null, 2)}\n`,
    );
    const blobs = this.storeBlobs(planned).then(() => fsyncDir(this.blobsDir));
    const [staged, stored] = await Promise.allSettled([staging, blobs]);
    if (stored.status === "rejected") {
      if (staged.status === "fulfilled") await staged.value.discard();
      throw stored.reason;
    }
    if (staged.status === "rejected") throw staged.reason;
    await staged.value.commit();
    return manifest;
  }

  private async storeBlobs(planned: PlannedFile[]): Promise<void> {
    for (const p of planned) {
      if (!p.fresh) continue;
      const { offset, length, sha256 } = p.fresh;
      // One file open at a time, and only while its bytes are copied.
      const handle = await reopenPlanned(p);
      try {
        await storeBlob(
          this.blobsDir,
          handle,
          offset,
          offset + length,
          sha256,
          p.file.path,
          this.options.hooks,
        );
      } finally {
        await handle.close();
      }
    }
  }

  private async ensureDirs(): Promise<void> {
    // Metadata of Brain's own files, on the calling thread (see io.ts).
    const created = mkdirSync(this.blobsDir, { recursive: true, mode: 0o700 });
    if (created === undefined) return;
    // New directories are entries in their parents: fsync each parent from the first one created down.
    for (let dir = this.blobsDir; ; dir = path.dirname(dir)) {
      await fsyncDir(path.dirname(dir));
      if (dir === created || path.dirname(dir) === dir) break;
    }
  }

  /** Checkpoint ids, oldest first. */
  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = readdirSync(this.dir); // a directory of manifests, read on the calling thread (see io.ts)
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return [];
      throw err;
    }
    return names
      .map((n) => MANIFEST.exec(n)?.[1])
      .filter((id): id is string => id !== undefined)
      .sort((a, b) => Number(a) - Number(b));
  }

  async get(id: string): Promise<CheckpointManifest> {
    const ids = await this.list();
    const resolved = id === "latest" ? ids.at(-1) : ids.find((known) => known === id);
    if (resolved === undefined) {
      const known =
        ids.length === 0
          ? "there are none yet: checkpoint the session between turns first"
          : `known: ${summarize(ids)}, or "latest"`;
      throw new CheckpointError(
        "bad_request",
        `no checkpoint ${JSON.stringify(id)} in ${this.dir}; ${known}`,
      );
    }
    return this.read(resolved);
  }

  async restore(id: string, intoDir: string): Promise<CheckpointManifest> {
    const manifest = await this.get(id);
    await restoreManifest(manifest, this.blobsDir, intoDir);
    return manifest;
  }

  async nativeFiles(id: string): Promise<NativeFile[]> {
    const manifest = await this.get(id);
    return manifest.files.map(({ path, size, append_only }) => ({ path, size, append_only }));
  }

  /** A manifest that cannot be read or parsed fails naming its file and what to do. */
  private async read(id: string): Promise<CheckpointManifest> {
    const file = path.join(this.dir, `${id}.json`);
    const damaged = (why: string) =>
      new CheckpointError(
        "brain_error",
        `checkpoint ${id} cannot be used: its manifest ${file} ${why}; use another checkpoint of the session, ` +
          "or put back an intact copy of that file (new checkpoints are made all the same)",
      );
    let text: string;
    try {
      text = readFileSync(file, "utf8"); // one manifest, read on the calling thread (see io.ts)
    } catch (err) {
      if (errnoCode(err) === "ENOENT") throw err;
      throw damaged(`could not be read (${(err as Error).message})`);
    }
    try {
      return parseManifest(text, id);
    } catch (err) {
      throw damaged(`is damaged (${(err as Error).message})`);
    }
  }
}

/**
 * The disk refused a step of storing the checkpoint (full, read-only, failing): the checkpoint was not made (its
 * manifest is written last), said as such with what to do, not as a bare ENOSPC naming no step of it.
 */
function notStored(err: unknown): unknown {
  if (err instanceof CheckpointError || errnoCode(err) === undefined) return err;
  const full = isDiskFull(errnoCode(err));
  const fix = full ? "free space on the daemon's disk" : "check the daemon's disk";
  return new CheckpointError(
    full ? "insufficient_storage" : "brain_error",
    `checkpoint failed: its files could not be stored (${(err as Error).message}); no checkpoint was made: ${fix} and checkpoint again`,
  );
}

function summarize(ids: string[]): string {
  const shown = ids.length > 20 ? [...ids.slice(0, 5), "…", ...ids.slice(-10)] : ids;
  return shown.join(", ");
}

/** A planned file's manifest entry: the segments it keeps, and the one its new bytes are stored as. */
function entryOf(p: PlannedFile): CheckpointFile {
  const segments = [...p.kept];
  if (p.fresh) {
    const { offset, length, sha256 } = p.fresh;
    segments.push({ blob: sha256, offset, length, sha256 });
  }
  const entry: CheckpointFile = { ...p.file, segments };
  if (p.head_sha256 !== undefined) entry.head_sha256 = p.head_sha256;
  if (p.tail_sha256 !== undefined) entry.tail_sha256 = p.tail_sha256;
  if (p.mode !== undefined) entry.mode = p.mode;
  return entry;
}
