#!/usr/bin/env node
// The `brain` command: the compiled CLI lives in dist/ (npm start / npm test build it first). This entry is
// CommonJS (bin/package.json) so the daemon's thread pool is sized before the ES module loader first uses it.
const { reserveIoThreads } = require("./io-threads.js");

if (process.argv[2] === "serve") reserveIoThreads();
import("../dist/src/cli/main.js").then(
  async ({ main }) => {
    process.exitCode = await main(process.argv.slice(2));
  },
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
