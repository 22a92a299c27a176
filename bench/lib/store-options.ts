// The store options a bench's Brain is made with. BRAIN_BENCH_JOURNAL=1 (or 0) turns the store's write-ahead
// journal (src/store/fs/journal.ts) on (or off) whatever its default, so one build measures both, run by run;
// unset, the store's default holds. Read here only: Brain itself takes no such variable.
import type { StoreOptions } from "../../src/store/fs/index.js";

export function benchStoreOptions(env: NodeJS.ProcessEnv = process.env): StoreOptions {
  const journal = env.BRAIN_BENCH_JOURNAL;
  if (journal === undefined || journal === "") return {};
  if (journal !== "0" && journal !== "1")
    throw new Error(`BRAIN_BENCH_JOURNAL must be 0 or 1, not ${journal}`);
  return { journal: journal === "1" };
}
