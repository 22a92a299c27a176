#!/usr/bin/env node
// The `brain` command: the compiled CLI lives in dist/ (npm start / npm test build it first).
import { main } from "../dist/src/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
