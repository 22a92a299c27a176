// Retention's work on a closed session's log, done to order in a test: the events up to a seq moved into a sealed
// segment, which is then dropped, so the log starts at seq + 1 (docs/protocol.md, "Dropped ranges").
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionEvent } from "../protocol/events.js";
import { decodeLogText, header } from "../store/fs/log-format.js";
import { retireSegments } from "../store/fs/retire.js";
import { sealedPath } from "../store/fs/segments.js";

/** An event as the log writes it. */
export const logLine = (e: SessionEvent) =>
  `{"seq":${e.seq},"ts":"${e.ts}",${e.turn === undefined ? "" : `"turn":${JSON.stringify(e.turn)},`}"type":"${e.type}","data":${JSON.stringify(e.data)}}\n`;

/** Drops the events up to `seq` of closed session `id` under `home`; returns every event the log held before. */
export async function retireUpTo(home: string, id: string, seq: number): Promise<SessionEvent[]> {
  const file = join(home, "sessions", id, "events.jsonl");
  const all = decodeLogText(readFileSync(file, "utf8"), id).events;
  writeFileSync(file, header(id) + all.slice(0, seq).map(logLine).join(""));
  renameSync(file, sealedPath(file, 1));
  writeFileSync(
    file,
    header(id, { seq, requests: [], openTurns: [] }) + all.slice(seq).map(logLine).join(""),
  );
  await retireSegments(file, id, { maxBytes: 1 });
  return all;
}
