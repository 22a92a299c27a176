// A RecordView over a records bucket whose watches a test can drop entries from, as nats-server 2.9.10 was seen to
// skip them, and reach, as a dropped subscription ends them. Closed after the test.
import type { KV, KvWatchEntry } from "@nats-io/kv";
import { onTestFinished } from "vitest";
import { storedRevision } from "../store/nats/record-gaps.js";
import { bucketState, RecordView } from "../store/nats/record-view.js";

/** A view of `records` whose watches never deliver the entries `drop` picks; its warnings kept. */
export function watchedView(
  records: KV,
  drop: (entry: KvWatchEntry) => boolean = () => false,
  catchUpMs = 30_000,
) {
  const watches: Awaited<ReturnType<KV["watch"]>>[] = [];
  const warnings: string[] = [];
  const view = new RecordView({
    watch: async () => {
      const watch = await records.watch();
      watches.push(watch);
      async function* delivered() {
        for await (const entry of watch) if (!drop(entry)) yield entry;
      }
      return Object.assign(delivered(), { stop: () => watch.stop() });
    },
    bucket: () => bucketState(records),
    revision: (seq) => storedRevision(records, seq),
    catchUpMs,
    warn: (message) => warnings.push(message),
  });
  onTestFinished(() => view.close());
  return { view, watches, warnings };
}

export const listedIds = (records: { id: string }[] | undefined) => records?.map((r) => r.id);
