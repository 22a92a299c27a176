// A RecordView over a records bucket whose watches a test can drop entries from, as nats-server 2.9.10 was seen to
// skip them, or hold back (a slow delivery), and reach, as a dropped subscription ends them. Closed after the test.
import type { KV, KvWatchEntry } from "@nats-io/kv";
import { onTestFinished } from "vitest";
import { storedRevision } from "../store/nats/record-gaps.js";
import { bucketState, RecordView } from "../store/nats/record-view.js";
import type { BucketState } from "../store/nats/record-watch.js";

/**
 * A view of `records` whose watches never deliver the entries `drop` picks, nor any entry before `drop` settles
 * on it; its warnings kept, and each bucket state it asked for (`asked`, in the order the answers came).
 */
export function watchedView(
  records: KV,
  drop: (entry: KvWatchEntry) => boolean | Promise<boolean> = () => false,
  catchUpMs = 30_000,
  quietMs?: number,
) {
  const watches: Awaited<ReturnType<KV["watch"]>>[] = [];
  const warnings: string[] = [];
  const asked: BucketState[] = [];
  const view = new RecordView({
    watch: async () => {
      const watch = await records.watch();
      watches.push(watch);
      async function* delivered() {
        for await (const entry of watch) if (!(await drop(entry))) yield entry;
      }
      return Object.assign(delivered(), { stop: () => watch.stop() });
    },
    bucket: async () => {
      const state = await bucketState(records);
      asked.push(state);
      return state;
    },
    revision: (seq) => storedRevision(records, seq),
    catchUpMs,
    quietMs,
    warn: (message) => warnings.push(message),
  });
  onTestFinished(() => view.close());
  return { view, watches, warnings, asked };
}

export const listedIds = (records: { id: string }[] | undefined) => records?.map((r) => r.id);
