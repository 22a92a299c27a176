#!/usr/bin/env node
// The `brain` command: the CLI bundled by `npm run build` (scripts/bundle-cli.mjs) into dist/cli/, a few files to
// load instead of a few hundred modules (npm start / npm test build it first), compiled from V8's code cache
// (load-bundle.js). This entry is CommonJS (bin/package.json) so the daemon's thread pool is sized before
// anything uses it.
const { existsSync } = require("node:fs");
const { join } = require("node:path");
const { reserveIoThreads } = require("./io-threads.js");
const { loadBundle } = require("./load-bundle.js");

/** 128 + SIGPIPE: what a shell shows for a command whose output's reader went away. */
const EXIT_OUTPUT_CLOSED = 141;

const main = join(__dirname, "../dist/cli/main.js");
if (process.argv[2] === "serve") reserveIoThreads();
// A reader of stdout that went away (`brain sessions events ID | head -1`) fails the next write with EPIPE, an
// 'error' event Node throws when nothing listens: the command died with a stack trace, mid-turn for `brain run`
// (its turn left open in the log, its session not closed). The event may come after the command returned.
let outputClosed = false;
process.stdout.on("error", (err) => {
  if (err.code !== "EPIPE") throw err;
  if (outputClosed) return;
  outputClosed = true;
  process.exitCode = EXIT_OUTPUT_CLOSED;
  process.stderr.write("brain: stdout was closed by its reader (as `| head` does): the output stops there\n");
});
if (existsSync(main)) {
  loadBundle(main)
    .main(process.argv.slice(2))
    .then((code) => {
      process.exitCode = outputClosed ? EXIT_OUTPUT_CLOSED : code;
      // `brain run` is done when main returns: its session and log are closed (durably) and its runner has
      // exited. Node's own teardown of a finished process (freeing the heap, the environment) took 35–100 ms
      // on a loaded machine, against 20–45 ms for process.exit; output is flushed first.
      if (process.argv[2] === "run") flushThenExit();
    });
} else {
  process.stderr.write(
    "brain: the CLI is not built (dist/cli/main.js is missing): run `npm run build` first\n",
  );
  process.exitCode = 1;
}

/** Exits once what was written to stdout and stderr is out (writes to pipes are asynchronous on some systems). */
function flushThenExit() {
  // process.exitCode: 141 when stdout's reader went away meanwhile.
  process.stdout.write("", () => process.stderr.write("", () => process.exit()));
}
