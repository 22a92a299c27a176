// Connection files of TCP and HTTP extension hosts (`<dir>/<id>.json`, nui: ~/.nui/connections). A file whose
// pid is no longer running is stale: reported with its path and the fix, never dialled.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { describeIssues } from "../../protocol/frames.js";
import { ConnectionInfo } from "../../protocol/nui/connection.js";
import { readAgentFileSync } from "../agent-files.js";

/**
 * More than any connection file holds: what is read of one. The directory is every process's of this user (an
 * extension's agent can write there), so what sits at a file's name may be anything.
 */
const MAX_CONNECTION_FILE_BYTES = 64 * 1024;

export type ConnectionLookup =
  | { state: "ready"; info: ConnectionInfo & { host: string }; path: string }
  | { state: "missing"; path: string }
  | { state: "stale"; path: string; pid: number }
  | { state: "invalid"; path: string; reason: string };

export function connectionFilePath(dir: string, id: string): string {
  return join(dir, `${id}.json`);
}

/** Whether a process with this pid runs (EPERM: it runs, as another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export async function readConnection(dir: string, id: string): Promise<ConnectionLookup> {
  const path = connectionFilePath(dir, id);
  let text: string | undefined;
  try {
    // Never through a link, never waiting on a FIFO (which would hold the lookup and a file system thread for
    // good), a regular file only, and its first 64 KiB.
    text = readAgentFileSync(dir, `${id}.json`, MAX_CONNECTION_FILE_BYTES);
  } catch (err) {
    // No directory yet: no host has written there.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { state: "missing", path };
    return { state: "invalid", path, reason: (err as Error).message };
  }
  if (text === undefined) return { state: "missing", path };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { state: "invalid", path, reason: `not JSON (${(err as Error).message})` };
  }
  const parsed = ConnectionInfo.safeParse(raw);
  if (!parsed.success) return { state: "invalid", path, reason: describeIssues(parsed.error) };
  const info = parsed.data;
  if (info.pid !== undefined && !pidAlive(info.pid)) return { state: "stale", path, pid: info.pid };
  return { state: "ready", path, info: { ...info, host: info.host || "127.0.0.1" } };
}

/**
 * Looks in each directory in turn (Brain's configured one, then nui's ~/.nui/connections, where unchanged nui
 * hosts write): the first live file wins; otherwise the first stale or broken one is what to report.
 */
export async function findConnection(dirs: string[], id: string): Promise<ConnectionLookup> {
  const lookups: ConnectionLookup[] = [];
  for (const dir of [...new Set(dirs)]) {
    const lookup = await readConnection(dir, id);
    if (lookup.state === "ready") return lookup;
    lookups.push(lookup);
  }
  return (
    lookups.find((l) => l.state !== "missing") ??
    lookups[0] ?? { state: "missing", path: connectionFilePath(dirs[0] ?? ".", id) }
  );
}

/** What to tell a user about a lookup that did not find a live host. */
export function describeLookup(lookup: Exclude<ConnectionLookup, { state: "ready" }>, ref: string): string {
  switch (lookup.state) {
    case "missing":
      return `no connection file ${lookup.path} for ${ref}: start its host (it writes the file once it listens), or give the manifest a runtime.command for Brain to start it`;
    case "stale":
      return `stale connection file ${lookup.path}: its process ${lookup.pid} is not running; start the host again, or delete the file`;
    case "invalid":
      return `connection file ${lookup.path} is unusable (${lookup.reason}); it must hold {"host", "port", "session_id", "pid"}`;
  }
}

export async function removeStale(lookup: ConnectionLookup): Promise<void> {
  if (lookup.state === "stale") await rm(lookup.path, { force: true });
}

/**
 * Polls until the host writes a live connection file, the host exits, or `timeoutMs` passes. A stale file
 * from an earlier host is not taken for the new one.
 */
export async function waitForConnection(
  dirs: string[],
  id: string,
  timeoutMs: number,
  hostExited: () => string | undefined,
): Promise<Extract<ConnectionLookup, { state: "ready" }>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lookup = await findConnection(dirs, id);
    if (lookup.state === "ready") return lookup;
    const exited = hostExited();
    if (exited) throw new Error(`${exited} before it wrote its connection file ${lookup.path}`);
    if (Date.now() >= deadline) {
      throw new Error(
        `the host wrote no live connection file ${lookup.path} within ${timeoutMs / 1000} s (it must write {"host", "port", "pid"} to $NUI_CONNECTIONS_DIR or ~/.nui/connections, named $NUI_CONNECTION_ID.json)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
