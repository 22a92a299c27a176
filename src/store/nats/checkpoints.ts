// A session's checkpoints in cluster mode: written on this node by the embedded CheckpointStore (same planner,
// same incremental segments, same manifests) into a local cache directory, then copied into the JetStream
// object store: each new content-addressed blob once (an append-only file grown since the last checkpoint
// sends only its new bytes), then the manifest, under an id reserved for it alone (./checkpoint-ids.ts). Another node
// pulls the manifests, and the blobs a restore needs, before it reads. Blobs are streamed both ways, never held
// whole in memory: a native file may be larger than the memory of the node, or than a Buffer can be.
import { createHash } from "node:crypto";
import { mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import type { ObjectStore } from "@nats-io/obj";
import type { Checkpoints, CreateOptions } from "../../core/checkpoints/index.js";
import { CheckpointError, CheckpointStore } from "../../core/checkpoints/index.js";
import { fsyncDir, readStream, writeAll, writeFileDurable } from "../../core/checkpoints/io.js";
import {
  type CheckpointManifest,
  type CheckpointSegment,
  parseManifest,
} from "../../core/checkpoints/manifest.js";
import { tempName } from "../../core/checkpoints/temps.js";
import type { NativeFile } from "../../protocol/runner.js";
import { idsKey, reservedIds, reserveId } from "./checkpoint-ids.js";
import { errorMessage, natsFailure } from "./errors.js";
import { type ObjectRead, ObjectReader } from "./object-read.js";

export class ReplicatedCheckpoints implements Checkpoints {
  private readonly local: CheckpointStore;
  private tail: Promise<unknown> = Promise.resolve();

  /** Reads objects from their chunk messages (./object-read.ts). */
  private readonly reader: ObjectReader;

  /**
   * `js` reads an object's chunks (./object-read.ts: why not ObjectStore.get); `records` (the records
   * bucket) holds the ids reserved for the session's checkpoints. `node.native` is the session's native dir on this
   * node: which checkpoint it holds is noted when one is made of it or restored into it (nativeAt). `node.owns`
   * throws unless this node owns the session now (its lease).
   */
  constructor(
    private readonly objects: ObjectStore,
    readonly session: string,
    readonly dir: string,
    js: JetStreamClient,
    private readonly records: KV,
    private readonly node: { native?: string; owns?: () => void; chunkWaitMs?: number } = {},
  ) {
    this.local = new CheckpointStore(dir);
    this.reader = new ObjectReader(objects, js, node.chunkWaitMs);
  }

  /**
   * Only the session's owner makes checkpoints: one that lost its lease (frozen past it while a turn ended) would
   * otherwise list a checkpoint of its stale native dir as the latest, and the next node to open the session
   * would restore it over the new owner's work. Unlike the log, the object store has no fence of its own, so the
   * lease is checked before each write that makes the checkpoint visible; and as a check passed may be stale by
   * the time its write lands, each manifest goes under an id reserved by compare-and-set for that checkpoint alone.
   */
  create(nativeDir: string, files: NativeFile[], opts: CreateOptions = {}): Promise<CheckpointManifest> {
    // One at a time: the index is read, extended and written back.
    const run = this.tail.then(async () => {
      this.node.owns?.();
      await this.pull();
      const base = await this.baseOf(nativeDir);
      let manifest = await this.local.create(nativeDir, files, { ...opts, base });
      const numbered = manifest.id;
      try {
        manifest = await this.reserve(manifest);
        await this.push(manifest);
      } catch (err) {
        // Not published, it is no checkpoint: left in the cache, it would pass here for the one the owner
        // publishes under the same id (pull takes only the ids this node lacks).
        for (const id of new Set([numbered, manifest.id])) {
          await unlink(path.join(this.dir, `${id}.json`)).catch(() => {});
        }
        throw err;
      }
      await this.noteNative(nativeDir, manifest.id);
      return manifest;
    });
    this.tail = run.catch(() => {});
    return run;
  }

  /**
   * What a checkpoint of `dir` builds on: what the native dir holds (made or restored here), not the cache's latest,
   * which may be a stale owner's (published, never logged) of other bytes. Any other dir is stored whole.
   */
  private async baseOf(dir: string): Promise<string | null | undefined> {
    if (this.node.native === undefined) return undefined;
    return path.resolve(dir) === path.resolve(this.node.native) ? ((await this.nativeAt()) ?? null) : null;
  }

  /**
   * The manifest under the id reserved for it: its own, unless another node holds that one (a checkpoint of its
   * own, or one in flight whose manifest this node could not pull yet), then renumbered in the cache.
   */
  private async reserve(manifest: CheckpointManifest): Promise<CheckpointManifest> {
    const id = await reserveId(this.records, this.session, Number(manifest.id), this.node.owns);
    if (id === manifest.id) return manifest;
    const moved = { ...manifest, id };
    await writeFileDurable(path.join(this.dir, `${id}.json`), `${JSON.stringify(moved, null, 2)}\n`);
    await unlink(path.join(this.dir, `${manifest.id}.json`));
    return moved;
  }

  /**
   * The checkpoint this node's native dir was last made into or restored from, if it was. The cache's manifests
   * cannot say it: reading the checkpoints (a fork, a restore, a list) pulls in those made on other nodes too.
   */
  async nativeAt(): Promise<string | undefined> {
    const text = await readFile(path.join(this.dir, NATIVE_AT), "utf8").catch(() => undefined);
    return text?.trim() || undefined;
  }

  private async noteNative(dir: string, id: string): Promise<void> {
    const { native } = this.node;
    if (native === undefined || path.resolve(dir) !== path.resolve(native)) return;
    await writeFileDurable(path.join(this.dir, NATIVE_AT), `${id}\n`);
  }

  async list(): Promise<string[]> {
    await this.pull();
    return this.local.list();
  }

  async get(id: string): Promise<CheckpointManifest> {
    return this.published(id);
  }

  async restore(id: string, intoDir: string): Promise<CheckpointManifest> {
    const manifest = await this.published(id);
    await this.pullBlobs(manifest);
    const restored = await this.local.restore(manifest.id, intoDir);
    await this.noteNative(intoDir, restored.id);
    return restored;
  }

  async nativeFiles(id: string): Promise<NativeFile[]> {
    const manifest = await this.published(id);
    return manifest.files.map(({ path, size, append_only }) => ({ path, size, append_only }));
  }

  /**
   * Manifest `id` (or "latest") as NATS holds it. The cache's copy is replaced when it differs: a node killed
   * between writing a checkpoint's manifest and publishing it kept one under an id another node may have
   * published since (pull fetches only the ids the cache lacks).
   */
  private async published(id: string): Promise<CheckpointManifest> {
    await this.pull();
    const ids = await this.local.list();
    const known = id === "latest" ? ids.at(-1) : ids.find((k) => k === id);
    // None such: the cache's answer names the ids there are.
    if (known === undefined) return this.local.get(id);
    const name = this.name("manifests", `${known}.json`);
    const data = await this.nats(`read checkpoint ${known}`, () => this.reader.bytes(name));
    const file = path.join(this.dir, `${known}.json`);
    if (!data) return this.local.get(known);
    // Damaged in NATS (pulled into the cache as it is, or not), it is named there: the fix is never the cache's
    // copy, replaced from NATS on each read. A good copy in the cache is left as it was.
    const text = Buffer.from(data).toString("utf8");
    try {
      parseManifest(text, known);
    } catch (err) {
      throw new CheckpointError(
        "brain_error",
        `checkpoint ${known} of session ${this.session} cannot be used: its manifest in NATS (object ${name} of the checkpoints object store) is damaged (${errorMessage(err)}); ` +
          "use another checkpoint of the session (new checkpoints are made all the same)",
      );
    }
    const cached = await readFile(file).catch(() => undefined);
    if (!cached || !Buffer.from(data).equals(cached)) await writeFileDurable(file, text);
    return this.local.get(known);
  }

  private name(kind: "blobs" | "manifests", file: string): string {
    return `${this.session}/${kind}/${file}`;
  }

  private get indexName(): string {
    return `${this.session}/index`;
  }

  /** The ids of the session's checkpoints as NATS lists them: those reserved, and those of the index object. */
  private async ids(): Promise<string[]> {
    const reserved = await reservedIds(this.records, this.session);
    const indexed = await this.index();
    return [...new Set([...indexed, ...reserved])];
  }

  /**
   * The ids the index object lists (written by every version, the only list of those before reservations).
   * Each names a file of the local cache (<id>.json): an index holding anything but checkpoint ids (a damaged or
   * planted object) is refused, never followed to a path outside the cache.
   */
  private async index(): Promise<string[]> {
    const data = await this.nats("read the checkpoint index", () => this.reader.bytes(this.indexName));
    if (!data) return [];
    let ids: unknown;
    try {
      ids = JSON.parse(Buffer.from(data).toString("utf8"));
    } catch {
      ids = undefined;
    }
    const bad = Array.isArray(ids)
      ? ids.find((id) => typeof id !== "string" || !CHECKPOINT_ID.test(id))
      : ids;
    if (!Array.isArray(ids) || bad !== undefined) {
      const bucket = await this.objects.status().then(
        (status) => status.bucket,
        () => "BUCKET",
      );
      throw new CheckpointError(
        "brain_error",
        `checkpoints of session ${this.session}: the index in NATS (object ${this.indexName}) is damaged: ${Array.isArray(ids) ? `it names ${JSON.stringify(bad)?.slice(0, 100)}, not a checkpoint id (digits)` : "it is not a JSON array of checkpoint ids"}; ` +
          `delete it (nats object del ${bucket} ${this.indexName}): the checkpoints are listed as well by key ${idsKey(this.session)} of the records bucket (all but those made by versions before it), and the next checkpoint writes the index again`,
      );
    }
    return ids as string[];
  }

  /** Copies the manifests stored in NATS that this node lacks into the local cache. */
  private async pull(): Promise<void> {
    const ids = await this.ids();
    const known = new Set(await this.local.list());
    for (const id of ids) {
      if (known.has(id)) continue;
      const data = await this.nats(`read checkpoint ${id}`, () =>
        this.reader.bytes(this.name("manifests", `${id}.json`)),
      );
      if (!data) continue;
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await writeFileDurable(path.join(this.dir, `${id}.json`), Buffer.from(data).toString("utf8"));
    }
  }

  private async pullBlobs(manifest: CheckpointManifest): Promise<void> {
    const blobsDir = path.join(this.dir, "blobs");
    await mkdir(blobsDir, { recursive: true, mode: 0o700 });
    for (const file of manifest.files) {
      for (const segment of file.segments) {
        const local = path.join(blobsDir, segment.blob);
        if ((await stat(local).catch(() => undefined))?.size === segment.length) continue;
        await this.pullBlob(segment, local, file.path);
      }
    }
  }

  /**
   * Streams one blob into a temporary file beside `local`, checks its size and sha256, and only then renames
   * it into place: a pull cut short, or bytes that are not the blob, never pass for it. A blob missing from
   * NATS is left missing: the restore then names it as damaged.
   */
  private async pullBlob(segment: CheckpointSegment, local: string, label: string): Promise<void> {
    const tmp = path.join(path.dirname(local), `.${tempName("tmp")}`);
    try {
      const out = await open(tmp, "wx", 0o600);
      const hash = createHash("sha256");
      let size = 0;
      let read: ObjectRead;
      try {
        read = await this.nats(`read blob ${segment.blob}`, () =>
          this.reader.read(this.name("blobs", segment.blob), async (chunk) => {
            hash.update(chunk);
            await writeAll(out, chunk, size);
            size += chunk.length;
          }),
        );
        await out.sync();
      } finally {
        await out.close();
      }
      // One written again meanwhile or gone from NATS is told apart by its size and sha256 below.
      if (read === "none") {
        await unlink(tmp);
        return;
      }
      const sha256 = hash.digest("hex");
      if (size !== segment.length || sha256 !== segment.sha256) {
        throw new CheckpointError(
          "brain_error",
          `restore failed: blob ${segment.blob} (for ${JSON.stringify(label)}) as stored in NATS is ${size} ` +
            `bytes with sha256 ${sha256}; the manifest expects ${segment.length} bytes with sha256 ${segment.sha256}`,
          label,
        );
      }
      await rename(tmp, local);
      await fsyncDir(path.dirname(local));
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  /** New blobs first, then the manifest that points at them, then the index that lists it. */
  private async push(manifest: CheckpointManifest): Promise<void> {
    const sent = new Set<string>();
    for (const file of manifest.files) {
      for (const segment of file.segments) {
        if (sent.has(segment.blob)) continue;
        sent.add(segment.blob);
        const name = this.name("blobs", segment.blob);
        const info = await this.nats("look up a blob", () => this.objects.info(name));
        if (info && !info.deleted && info.size === segment.length) continue;
        const blob = await open(path.join(this.local.blobsDir, segment.blob), "r");
        try {
          await this.nats(`store blob ${segment.blob}`, () => this.objects.put({ name }, readStream(blob)));
        } finally {
          await blob.close();
        }
      }
    }
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    this.node.owns?.();
    await this.nats(`store checkpoint ${manifest.id}`, () =>
      this.objects.putBlob({ name: this.name("manifests", `${manifest.id}.json`) }, Buffer.from(text)),
    );
    // For nodes of earlier versions, which list no other: read, extended and written back, a late write can drop
    // ids from it, never from the reserved ones.
    const ids = await this.index();
    if (!ids.includes(manifest.id)) ids.push(manifest.id);
    this.node.owns?.();
    await this.nats("store the checkpoint index", () =>
      this.objects.putBlob({ name: this.indexName }, Buffer.from(JSON.stringify(ids))),
    );
  }

  /** Deletes every object of the session (its removal). */
  async removeAll(): Promise<void> {
    // A damaged index does not keep the session from going: its objects are removed as far as they are known.
    const ids = await this.ids().catch(() => this.index().catch(() => []));
    const blobs = new Set<string>();
    for (const id of ids) {
      const data = await this.reader.bytes(this.name("manifests", `${id}.json`)).catch(() => null);
      if (data) for (const blob of blobsNamed(data)) blobs.add(blob);
      await this.objects.delete(this.name("manifests", `${id}.json`)).catch(() => {});
    }
    for (const blob of blobs) await this.objects.delete(this.name("blobs", blob)).catch(() => {});
    await this.objects.delete(this.indexName).catch(() => {});
    await this.records.purge(idsKey(this.session)).catch(() => {});
  }

  private async nats<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw natsFailure(`checkpoints of session ${this.session}: cannot ${what}`, err);
    }
  }
}

/**
 * The blobs a manifest object names, as far as it can be read: a damaged one (not JSON, not a manifest) names
 * none, and its blobs stay behind rather than the whole session (removeAll).
 */
function blobsNamed(data: Uint8Array): string[] {
  try {
    const manifest = JSON.parse(Buffer.from(data).toString("utf8")) as CheckpointManifest;
    return manifest.files.flatMap((f) => f.segments.map((s) => s.blob)).filter((b) => typeof b === "string");
  } catch {
    return [];
  }
}

/** A checkpoint's id, as CheckpointStore makes them (000001, ...). */
const CHECKPOINT_ID = /^\d{6,}$/;

/** In the cache dir, beside the manifests (which are <id>.json): the checkpoint the native dir holds. */
const NATIVE_AT = "native-at";
