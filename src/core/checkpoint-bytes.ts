// What a session's checkpoints hold in its store, for limits.log_bytes_per_session (./log-bound.ts): each manifest,
// and each content-addressed blob once (a blob is a segment's bytes, named by their sha256; checkpoints share the
// blobs of what they have in common), as the embedded store writes them to files and the cluster's object store
// keeps them. Counted from the manifests, so both stores are counted alike and a restart counts them again; a
// manifest never changes once made, so each is read once per process and a check reads only those made since.

import type { Checkpoints } from "./checkpoints/index.js";

interface Counted {
  ids: Set<string>;
  blobs: Set<string>;
  bytes: number;
}

export class CheckpointBytes {
  /** Per session, the count so far; one count at a time, so that no manifest is added twice. */
  private readonly counted = new Map<string, Promise<Counted | undefined>>();

  async of(
    id: string,
    checkpoints: Pick<Checkpoints, "list" | "get">,
  ): Promise<{ bytes: number; count: number }> {
    const before = this.counted.get(id) ?? Promise.resolve(undefined);
    const next = before.catch(() => undefined).then((known) => count(checkpoints, known));
    this.counted.set(id, next);
    const counted = await next;
    return { bytes: counted.bytes, count: counted.ids.size };
  }

  /** The session closed here or was deleted: its next count starts from none (an id made again, too). */
  forget(id: string): void {
    this.counted.delete(id);
  }

  /** How many sessions' counts are held. */
  get size(): number {
    return this.counted.size;
  }
}

async function count(checkpoints: Pick<Checkpoints, "list" | "get">, known?: Counted): Promise<Counted> {
  const ids = await checkpoints.list();
  const listed = new Set(ids);
  // One counted that the store no longer lists: the session was deleted and made again elsewhere: count anew.
  const base = known && [...known.ids].every((id) => listed.has(id)) ? known : undefined;
  const counted: Counted = base ?? { ids: new Set(), blobs: new Set(), bytes: 0 };
  for (const id of ids) {
    if (counted.ids.has(id)) continue;
    // A manifest that cannot be read (damaged) holds no blob a fork could use; its file is small.
    const manifest = await checkpoints.get(id).catch(() => undefined);
    counted.ids.add(id);
    if (!manifest) continue;
    // As the embedded store writes it (CheckpointStore.store); the object store holds the same text.
    counted.bytes += Buffer.byteLength(`${JSON.stringify(manifest, null, 2)}\n`);
    for (const file of manifest.files) {
      for (const segment of file.segments) {
        if (counted.blobs.has(segment.blob)) continue;
        counted.blobs.add(segment.blob);
        counted.bytes += segment.length;
      }
    }
  }
  return counted;
}
