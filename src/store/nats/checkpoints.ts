// A session's checkpoints in cluster mode: written on this node by the embedded CheckpointStore (same planner,
// same incremental segments, same manifests) into a local cache directory, then copied into the JetStream
// object store: each new content-addressed blob once (an append-only file grown since the last checkpoint
// sends only its new bytes), then the manifest, then the session's index of checkpoint ids. Another node
// pulls the manifests, and the blobs a restore needs, before it reads.
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ObjectStore } from "@nats-io/obj";
import type { Checkpoints, CreateOptions } from "../../core/checkpoints/index.js";
import { CheckpointStore } from "../../core/checkpoints/index.js";
import { writeFileDurable } from "../../core/checkpoints/io.js";
import type { CheckpointManifest } from "../../core/checkpoints/manifest.js";
import type { NativeFile } from "../../protocol/runner.js";
import { natsFailure } from "./errors.js";

export class ReplicatedCheckpoints implements Checkpoints {
  private readonly local: CheckpointStore;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly objects: ObjectStore,
    readonly session: string,
    readonly dir: string,
  ) {
    this.local = new CheckpointStore(dir);
  }

  create(nativeDir: string, files: NativeFile[], opts: CreateOptions = {}): Promise<CheckpointManifest> {
    // One at a time: the index is read, extended and written back.
    const run = this.tail.then(async () => {
      await this.pull();
      const manifest = await this.local.create(nativeDir, files, opts);
      await this.push(manifest);
      return manifest;
    });
    this.tail = run.catch(() => {});
    return run;
  }

  async list(): Promise<string[]> {
    await this.pull();
    return this.local.list();
  }

  async get(id: string): Promise<CheckpointManifest> {
    await this.pull();
    return this.local.get(id);
  }

  async restore(id: string, intoDir: string): Promise<CheckpointManifest> {
    await this.pull();
    const manifest = await this.local.get(id);
    await this.pullBlobs(manifest);
    return this.local.restore(manifest.id, intoDir);
  }

  async nativeFiles(id: string): Promise<NativeFile[]> {
    await this.pull();
    return this.local.nativeFiles(id);
  }

  private name(kind: "blobs" | "manifests", file: string): string {
    return `${this.session}/${kind}/${file}`;
  }

  private get indexName(): string {
    return `${this.session}/index`;
  }

  private async index(): Promise<string[]> {
    const data = await this.nats("read the checkpoint index", () => this.objects.getBlob(this.indexName));
    return data ? (JSON.parse(Buffer.from(data).toString("utf8")) as string[]) : [];
  }

  /** Copies the manifests stored in NATS that this node lacks into the local cache. */
  private async pull(): Promise<void> {
    const ids = await this.index();
    const known = new Set(await this.local.list());
    for (const id of ids) {
      if (known.has(id)) continue;
      const data = await this.nats(`read checkpoint ${id}`, () =>
        this.objects.getBlob(this.name("manifests", `${id}.json`)),
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
        const data = await this.nats(`read blob ${segment.blob}`, () =>
          this.objects.getBlob(this.name("blobs", segment.blob)),
        );
        // A missing blob is left missing: the restore then names it as damaged.
        if (data) await writeFile(local, data, { mode: 0o600 });
      }
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
        const data = await readFile(path.join(this.local.blobsDir, segment.blob));
        await this.nats(`store blob ${segment.blob}`, () => this.objects.putBlob({ name }, data));
      }
    }
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    await this.nats(`store checkpoint ${manifest.id}`, () =>
      this.objects.putBlob({ name: this.name("manifests", `${manifest.id}.json`) }, Buffer.from(text)),
    );
    const ids = await this.index();
    if (!ids.includes(manifest.id)) ids.push(manifest.id);
    await this.nats("store the checkpoint index", () =>
      this.objects.putBlob({ name: this.indexName }, Buffer.from(JSON.stringify(ids))),
    );
  }

  /** Deletes every object of the session (its removal). */
  async removeAll(): Promise<void> {
    const ids = await this.index();
    const blobs = new Set<string>();
    for (const id of ids) {
      const data = await this.objects.getBlob(this.name("manifests", `${id}.json`)).catch(() => null);
      if (data) {
        const manifest = JSON.parse(Buffer.from(data).toString("utf8")) as CheckpointManifest;
        for (const f of manifest.files) for (const s of f.segments) blobs.add(s.blob);
      }
      await this.objects.delete(this.name("manifests", `${id}.json`)).catch(() => {});
    }
    for (const blob of blobs) await this.objects.delete(this.name("blobs", blob)).catch(() => {});
    await this.objects.delete(this.indexName).catch(() => {});
  }

  private async nats<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw natsFailure(`checkpoints of session ${this.session}: cannot ${what}`, err);
    }
  }
}
