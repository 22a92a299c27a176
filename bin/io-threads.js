// libuv's thread pool carries every durable commit of every session's log (one O_DSYNC write, or write +
// fdatasync) as well as the daemon's other file work. Its default of 4 threads lets a daemon make only 4
// commits at once: with 100 sessions streaming, commits queue behind each other and every watcher waits
// (bench sse-load: p99 4.6× a plain relay with 4 threads, 1.5× with 64, on the same loaded machine).
// libuv sizes the pool when it is first used, and Node's ESM loader reads modules through it, so this runs
// from a CommonJS entry before any module of Brain loads. An operator's own UV_THREADPOOL_SIZE is kept.
const DAEMON_IO_THREADS = 64;

/** Sets UV_THREADPOOL_SIZE for a process that hosts many sessions' logs, unless the operator set it. */
function reserveIoThreads(env = process.env) {
  if (!env.UV_THREADPOOL_SIZE) env.UV_THREADPOOL_SIZE = String(DAEMON_IO_THREADS);
  return env;
}

module.exports = { DAEMON_IO_THREADS, reserveIoThreads };
