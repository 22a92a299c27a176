// Reading an object of the checkpoints' object store from its chunk messages (the object store's layout: subject
// `$O.<bucket>.C.<nuid>` of its stream), for ./checkpoints.ts. ObjectStore.get would serve the same bytes, but it
// queues every chunk as fast as NATS delivers them, whatever the reader takes (a blob larger than memory would not
// fit), and it waits for ever for chunks NATS no longer holds: those of an object written again after it was looked
// up (the checkpoint index is, by every checkpoint), whose old chunks NATS purges as the new ones land.
import type { JetStreamClient } from "@nats-io/jetstream";
import type { ObjectInfo, ObjectStore } from "@nats-io/obj";
import { CheckpointError } from "../../core/checkpoints/index.js";
import { beforeDeadline } from "../../core/checkpoints/io.js";
import { sleep } from "../../core/sleep.js";

/**
 * How a read ended: all its bytes given, no such object, the object written again (or deleted) meanwhile, or
 * NATS holding none of its bytes (its chunks purged by limits on the stream).
 */
export type ObjectRead = "read" | "none" | "replaced" | "gone";

/** How many chunk messages (128 KiB each, as the object store writes them) a pull may hold ahead of the disk. */
const READ_AHEAD = 8;

/** How long a chunk may be awaited before the object is looked up again, to learn whether it was replaced. */
const RELOOK_MS = 250;

/** How many times a whole read starts again on a newer version of its object before it gives up. */
const REREADS = 10;

export class ObjectReader {
  /** The object store's stream, looked up once. */
  private streamName: Promise<string> | undefined;

  /** `chunkWaitMs`: how long a chunk of an object not replaced may take (NATS holds the next ahead of time). */
  constructor(
    private readonly objects: ObjectStore,
    private readonly js: JetStreamClient,
    private readonly chunkWaitMs = 60_000,
  ) {}

  /**
   * A small object's bytes whole (a manifest, the index), or null when there is none. Read again from the
   * start when it was written again meanwhile: the newer version is the one to give.
   */
  async bytes(name: string): Promise<Uint8Array | null> {
    for (let i = 0; i < REREADS; i++) {
      const chunks: Uint8Array[] = [];
      const read = await this.read(name, async (chunk) => {
        chunks.push(chunk);
      });
      if (read === "none") return null;
      if (read === "read") return Buffer.concat(chunks);
      if (read === "gone") {
        throw new CheckpointError(
          "brain_error",
          `NATS describes object ${name} but holds none of its bytes (purged by limits on the object store's stream?): check the checkpoint bucket`,
        );
      }
    }
    throw new CheckpointError(
      "brain_error",
      `NATS object ${name} was written again ${REREADS} times while it was read; retry once its writes stop`,
    );
  }

  /** Streams an object's bytes to `onChunk`, the next asked for only once it has taken the last. */
  async read(name: string, onChunk: (chunk: Uint8Array) => Promise<void>): Promise<ObjectRead> {
    const info = await this.objects.info(name);
    if (!info || info.deleted) return "none";
    if (info.size === 0) return "read";
    this.streamName ??= this.objects.status().then((status) => status.streamInfo.config.name);
    const stream = await this.streamName;
    const subject = `$O.${info.bucket}.C.${info.nuid}`;
    // A consumer of no message waits for one forever: an object whose chunks NATS no longer holds (purged by
    // limits on the stream, or by the session's removal meanwhile) hung the restore. It has no bytes to give.
    const held = (await (await this.js.streams.get(stream)).info(false, { subjects_filter: subject })).state
      .subjects?.[subject];
    if (!held) return (await this.replaced(name, info)) ? "replaced" : "gone";
    // A single subject: the 3.4 client refuses the array form on a 2.9 server.
    const consumer = await this.js.consumers.get(stream, { filter_subjects: subject } as never);
    const messages = await consumer.consume({ max_messages: READ_AHEAD });
    let received = 0;
    let count = 0;
    const chunks = messages[Symbol.asyncIterator]();
    try {
      for (;;) {
        // Chunks removed after they were counted (a purge, the session's removal) would never come: bounded, as
        // NATS holds the next ahead of time and sends it at once; those of an object written again, told apart.
        const pending = beforeDeadline(chunks.next(), this.chunkWaitMs, name);
        const next = await Promise.race([pending, this.replacedWhile(pending, name, info)]);
        if (next === "replaced") return "replaced";
        if (next.done) break;
        const msg = next.value;
        await onChunk(msg.data);
        received += msg.data.length;
        count += 1;
        if (msg.info.pending === 0 || received >= info.size || count >= held) break;
      }
    } finally {
      // As a for-await's exit would: the messages close only once their iterator is done.
      void chunks.return?.();
      await messages.close();
      // Left alone, the ephemeral consumer would linger on the server until it has been idle for minutes.
      await consumer.delete().catch(() => {});
    }
    return "read";
  }

  /** Resolves "replaced" once the object is seen written again or deleted while `pending` waits; else never. */
  private async replacedWhile(
    pending: Promise<unknown>,
    name: string,
    info: ObjectInfo,
  ): Promise<"replaced"> {
    let waiting = true;
    const done = () => {
      waiting = false;
    };
    pending.then(done, done);
    for (;;) {
      await sleep(RELOOK_MS);
      if (!waiting) return new Promise<never>(() => {});
      if (await this.replaced(name, info).catch(() => false)) return "replaced";
    }
  }

  private async replaced(name: string, info: ObjectInfo): Promise<boolean> {
    const now = await this.objects.info(name);
    return !now || now.deleted || now.nuid !== info.nuid;
  }
}
