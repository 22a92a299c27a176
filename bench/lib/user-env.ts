// The bench runs itself with the daemon's thread pool (run.ts restarts itself with UV_THREADPOOL_SIZE, as
// `brain serve` sizes it). A command it spawns as a user would type it (`brain run`) must not inherit that pool:
// starting 64 threads cost `brain run` about 40 ms of CPU that no user's run pays.

/** Set by run.ts in its own restart when the pool size was its own addition, not the operator's. */
export const BENCH_IO_THREADS = "BRAIN_BENCH_IO_THREADS";

/** The environment the bench was started with: without the thread pool size it added for itself. */
export function userEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out = { ...env };
  if (out[BENCH_IO_THREADS]) delete out.UV_THREADPOOL_SIZE;
  delete out[BENCH_IO_THREADS];
  return out;
}
