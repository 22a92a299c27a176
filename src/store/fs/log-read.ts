// Reading a log that is not open here (the CLI, the daemon for a session it has not opened): no lock needed.
import fs from "node:fs";
import nodePath from "node:path";
import type { SessionEvent } from "../../protocol/events.js";
import { failure } from "./errors.js";
import { readAfter, scanLog } from "./jsonl-scan.js";
import { LineDecoder } from "./log-format.js";
import { type LogIO, nodeLogIO, readFully } from "./log-io.js";

/**
 * Events of a log that is not open here (the CLI reading a session), with seq > after (at most `limit`). A torn
 * last line is skipped. The session id is the log's directory name unless given.
 */
export async function readEventsFile(
  path: string,
  io: LogIO = nodeLogIO,
  range: { after?: number; limit?: number; session?: string } = {},
): Promise<SessionEvent[]> {
  let fd: number;
  try {
    fd = await io.open(path, fs.constants.O_RDONLY);
  } catch (err) {
    throw failure(path, "cannot open", err);
  }
  const session = range.session ?? nodePath.basename(nodePath.dirname(path));
  try {
    const size = await io.size(fd);
    const after = range.after ?? 0;
    if (after === 0 && range.limit === undefined) {
      // The whole log: walked from the start, so corruption is reported by line number.
      const events: SessionEvent[] = [];
      const onEvents = (batch: SessionEvent[]) => {
        for (const e of batch) events.push(e);
      };
      await scanLog(io, fd, size, path, { session, from: 0, prevSeq: 0, onEvents });
      return events;
    }
    const own = range.session ?? (await headerSession(io, fd)) ?? session;
    return await readAfter(io, fd, size, path, own, after, range.limit ?? Number.POSITIVE_INFINITY);
  } finally {
    await io.close(fd);
  }
}

/** The session named by the file's header line, if it has one. */
async function headerSession(io: LogIO, fd: number): Promise<string | undefined> {
  const head = (await readFully(io, fd, 0, 1024)).toString("utf8");
  const nl = head.indexOf("\n");
  if (nl < 0) return undefined;
  const decoder = new LineDecoder("");
  return decoder.decode(head.slice(0, nl), []) === undefined && decoder.session !== ""
    ? decoder.session
    : undefined;
}
