// The cluster store's tombstones of keyed deletes (src/core/deleted-sessions.ts): one key per tenant (a digest of
// the tenant) in a bucket of their own (<prefix>_deleted, made by ./context.ts), so no key of the records bucket
// changes and its watch never sees them. The bucket's max_age is the window: a tenant that deletes nothing for a
// day has its key expire. A list is replaced by compare-and-set (./kv-update.ts): two nodes deleting at once both
// land. A node of an earlier version neither reads nor writes the bucket: a retry it answers is a 404 as before,
// and a delete it made is not remembered; nodes of this version remember each other's.
import { JetStreamApiError } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { type DeletedSessions, kept, type Tombstone, tenantSlot } from "../../core/deleted-sessions.js";
import { natsFailure } from "./errors.js";
import { createOn, updateOn } from "./kv-update.js";

/** A compare-and-set that keeps losing to other nodes' deletes gives up after this many tries. */
const TRIES = 20;

export class NatsDeletedSessions implements DeletedSessions {
  constructor(private readonly bucket: KV) {}

  async list(tenant: string): Promise<Tombstone[]> {
    const entry = await this.read(tenant);
    return kept(entry?.list, Date.now());
  }

  async add(tenant: string, tombstone: Tombstone): Promise<void> {
    const key = tenantSlot(tenant);
    for (let attempt = 1; ; attempt++) {
      const entry = await this.read(tenant);
      const value = JSON.stringify(kept(entry?.list, Date.now(), tombstone));
      try {
        if (entry) await updateOn(this.bucket, key, value, entry.revision);
        else await createOn(this.bucket, key, value);
        return;
      } catch (err) {
        if (!(err instanceof JetStreamApiError) || attempt >= TRIES) {
          throw natsFailure(`cannot record the delete of session ${tombstone.id}`, err);
        }
      }
    }
  }

  /** The tenant's stored list and its revision; none for a key never written, expired or deleted. */
  private async read(tenant: string): Promise<{ list: unknown; revision: number } | undefined> {
    const entry = await this.bucket.get(tenantSlot(tenant)).catch((err: unknown) => {
      throw natsFailure("cannot read the deleted sessions", err);
    });
    if (entry?.operation !== "PUT") return undefined;
    try {
      return { list: JSON.parse(entry.string()), revision: entry.revision };
    } catch {
      return { list: [], revision: entry.revision };
    }
  }
}
