#!/usr/bin/env node
// The `brain` command: the CLI bundled by `npm run build` (scripts/bundle-cli.mjs) into dist/cli/, a few files to
// load instead of a few hundred modules (npm start / npm test build it first). This entry is CommonJS
// (bin/package.json) so the daemon's thread pool is sized before the ES module loader first uses it.
const { reserveIoThreads } = require("./io-threads.js");

if (process.argv[2] === "serve") reserveIoThreads();
import("../dist/cli/main.js").then(
  async (cli) => {
    process.exitCode = await cli.main(process.argv.slice(2));
  },
  (err) => {
    if (err?.code !== "ERR_MODULE_NOT_FOUND" || !String(err.message).includes("dist/cli/main.js")) throw err;
    process.stderr.write(
      "brain: the CLI is not built (dist/cli/main.js is missing): run `npm run build` first\n",
    );
    process.exitCode = 1;
  },
);
