// A compare-and-set update of a KV key that holds on nats-server 2.9 in a cluster. There, writes racing with the
// same expected revision can all be accepted (the stream leader checks the expected last sequence against what
// it has applied, not what it has proposed): two nodes patching one record at once both "won", and the later
// write, made on the revision both read, dropped the earlier one's patch (5 of 20 such races here). The message
// id dedup is checked at the leader as a message is proposed, so each update also carries an id naming the key
// and the revision it was made on: of two writes made on one revision, the second is a duplicate, not stored,
// and told so; it reads the key again, as after a wrong last sequence.
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { Bucket, type KV } from "@nats-io/kv";

/**
 * Writes `value` to `key` if its last revision is `revision`; resolves with the new revision. Another write made
 * on `revision` first is refused as a wrong last sequence (JetStreamApiError), whichever the server checked.
 */
export async function updateOn(kv: KV, key: string, value: string, revision: number): Promise<number> {
  // The buckets are made by Kvm (./context.ts): anything else has no subject to write to.
  if (!(kv instanceof Bucket)) return kv.update(key, value, revision);
  const ack = await kv.js.publish(kv.subjectForKey(kv.encodeKey(key), true), value, {
    expect: { lastSubjectSequence: revision },
    msgID: `${key}@${revision}`,
  });
  if (!ack.duplicate) return ack.seq;
  // This very write, stored by an earlier try whose answer was lost, or another's made on the same revision.
  const stored = await kv.get(key, { revision: ack.seq }).catch(() => null);
  if (stored?.string() === value) return ack.seq;
  throw new JetStreamApiError({
    code: 400,
    err_code: JetStreamApiCodes.StreamWrongLastSequence,
    description: `wrong last sequence: ${key} was updated on revision ${revision} by another writer`,
  });
}

/**
 * Writes `value` to `key` if it holds none (never written, or deleted); resolves with the new revision. Kv.create
 * writes over a deleted key's marker by a plain compare-and-set, which nats-server 2.9 lets two racing writers
 * both pass (two nodes both claimed one released lease, 6 rounds of 40 here): that write is made by updateOn.
 */
export async function createOn(kv: KV, key: string, value: string): Promise<number> {
  let first: unknown;
  try {
    // A key never written: the server refuses the second of two such writes, it did in every race here.
    return await kv.put(key, value, { previousSeq: 0 });
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || !wrongLast(err)) throw err;
    first = err;
  }
  const entry = await kv.get(key);
  if (entry?.operation !== "DEL" && entry?.operation !== "PURGE") throw first;
  return updateOn(kv, key, value, entry.revision);
}

function wrongLast(err: JetStreamApiError): boolean {
  const code = err.code;
  return (
    code === JetStreamApiCodes.StreamWrongLastSequence ||
    code === JetStreamApiCodes.StreamWrongLastSequenceUnknown
  );
}
