// Tells a follower of a session that its record was deleted. A delete purges the log's subject, which the log's
// consumer is never told of: the record's key says so. A watch of the key that ends or fails while followed is
// said and made again, as a follow of the log is (log-read.ts): left dead, this node's watchers of the session
// were never told of its delete. Once watching again the key is read, so a delete made meanwhile is not missed.
import type { KV } from "@nats-io/kv";
import { sleep } from "../../core/sleep.js";
import type { SessionEvent } from "../../protocol/events.js";
import type { NatsContext } from "./context.js";
import { errorMessage, natsFailure } from "./errors.js";
import { LogReader } from "./log-read.js";

/** How long a watch that failed waits before it is made again: doubling from this, up to the max. */
const WATCH_RETRY_MS = 250;
const WATCH_RETRY_MAX_MS = 10_000;

/**
 * Calls `gone` once the record of session `id` is deleted (or found deleted after a failed watch). Resolves once
 * watching, with the stop function; rejects when the first watch cannot be made.
 */
export async function watchGone(
  ctx: Pick<NatsContext, "nc" | "records">,
  id: string,
  gone: () => void,
  warn: (message: string) => void,
): Promise<() => void> {
  const stop = new AbortController();
  let watch: Awaited<ReturnType<KV["watch"]>> = await ctx.records.watch({ key: id });
  void (async () => {
    for (let failures = 0; ; ) {
      let err: unknown = new Error("the watch ended");
      try {
        for await (const entry of watch) {
          if (entry.operation === "PUT") continue;
          return gone();
        }
      } catch (thrown) {
        err = thrown;
      }
      for (;;) {
        // The connection closing (the node stopping) ends every watch: nothing to make again.
        if (stop.signal.aborted || ctx.nc.isClosed() || ctx.nc.isDraining()) return;
        watch.stop();
        const retryMs = Math.min(WATCH_RETRY_MAX_MS, WATCH_RETRY_MS * 2 ** Math.min(failures++, 8));
        warn(
          `cluster store: watching session ${id}'s record for its delete failed (${errorMessage(err)}); watching it again in ${retryMs} ms`,
        );
        if (!(await sleep(retryMs, stop.signal))) return;
        try {
          watch = await ctx.records.watch({ key: id });
          if (stop.signal.aborted) return watch.stop();
          const now = await ctx.records.get(id);
          if (now?.operation === "PUT") break;
          watch.stop();
          return gone();
        } catch (thrown) {
          err = thrown;
        }
      }
    }
  })();
  return () => {
    stop.abort();
    watch.stop();
  };
}

/**
 * Every event of session `id` after `after` (default: from the tail now), then each new batch as it is
 * acknowledged, from any node; `gone` once its record is deleted (or found deleted); `damaged` when the follow
 * ends at a damaged message of the log (LogReader.follow), with the error a read of it gives. Resolves once
 * following, with the stop function.
 */
export async function followSession(
  ctx: NatsContext,
  id: string,
  follower: {
    after: number | undefined;
    listener: (events: SessionEvent[]) => void;
    gone: (() => void) | undefined;
    damaged?: ((err: Error) => void) | undefined;
    warn: (message: string) => void;
  },
): Promise<() => void> {
  const { after, listener, gone, damaged, warn } = follower;
  const stopEvents = await new LogReader(ctx, id).follow(
    after,
    listener,
    (err, seen, retryMs) =>
      warn(
        `cluster store: following session ${id}'s log failed after seq ${seen} (${errorMessage(err)}); following it again from there in ${retryMs} ms`,
      ),
    (err, seen) => {
      warn(`cluster store: following session ${id}'s log stopped after seq ${seen}: ${err.message}`);
      damaged?.(err);
    },
  );
  if (!gone) return stopEvents;
  try {
    const stopWatch = await watchGone(ctx, id, gone, warn);
    return () => {
      stopEvents();
      stopWatch();
    };
  } catch (err) {
    stopEvents();
    throw natsFailure(`cannot follow session ${id}`, err);
  }
}
