// Child process of bench/log-scale.ts: opens one session log as a new turn would (the log, its open state, the
// turn's first append), then reads 10 events after a cursor near its end. A fresh process per figure, so the
// memory an open costs is this process's RSS growth and nothing else's.
// Prints one JSON line: {"openMs":…,"openBytes":…,"readMs":…,"events":…}.
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { JsonlEventLog } from "../../src/store/fs/index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]) * 1024;
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

const [file = "", session = "bench"] = process.argv.slice(2);
gc();
const rss0 = rss();
const t0 = process.hrtime.bigint();
const log = await JsonlEventLog.open(file, session);
const state = log.openState();
await log.append([{ type: "user.prompt", turn: "next", data: { text: "after" } }]);
const openMs = ms(t0);
const openBytes = rss() - rss0;
const t1 = process.hrtime.bigint();
const read = await log.read(Math.max(0, log.lastSeq - 11), 10);
const readMs = ms(t1);
await log.close();
const out = {
  openMs,
  openBytes,
  readMs,
  events: log.lastSeq,
  read: read.length,
  open: state.openTurns.length,
};
process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
