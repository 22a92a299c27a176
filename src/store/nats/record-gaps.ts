// The revisions of the records bucket a watch skipped, read from the bucket's stream by sequence.
//
// Why: a watch of every key delivers each write after its first values, so a revision it skips is one the view
// would never apply. nats-server 2.9.10 was seen to do it (about 1 run in 10 of a create/remove loop under load):
// a watch delivered a session's purges either side of its record's delete marker but never the marker itself,
// and the view listed the removed session ever after. Watching with all history did not cure it.
import { Bucket, type KV, type KvEntry } from "@nats-io/kv";

/**
 * More revisions than this skipped at once are not read one by one: the view watches again instead (its first
 * values are every key's last, one pass of the bucket). A gap is one or two revisions when the server drops one;
 * a long one means the watch lost its place, and reading it would hold every later write back meanwhile.
 */
export const MAX_GAP_READS = 100;

/**
 * Revision `seq` of the records bucket as it is stored, or undefined when the stream no longer holds it (a later
 * write of its key replaced it, or a purge removed it: nothing of it is left for a view to apply).
 */
export async function storedRevision(records: KV, seq: number): Promise<KvEntry | undefined> {
  // The bucket's own message read and entry: its subject prefix, key codec and markers (DEL, PURGE, MaxAge).
  if (!(records instanceof Bucket)) throw new Error("the records bucket is not a KV bucket of @nats-io/kv");
  const message = await records.jsm.streams.getMessage(records.bucketName(), { seq });
  return message ? records.smToEntry(message) : undefined;
}
