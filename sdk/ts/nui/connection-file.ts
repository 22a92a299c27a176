// The connection file a TCP or HTTP host writes once it listens, so nui or Brain can find it:
// `<dir>/<id>.json` = {host, port, session_id, pid}. dir: NUI_CONNECTIONS_DIR, else ~/.nui/connections.
// id: NUI_CONNECTION_ID (from ext:<extension>/<harness-id>), else the agent's name.
import { randomUUID } from "node:crypto";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export function connectionFile(
  name: string,
  options: { connectionsDir?: string; connectionId?: string } = {},
): string {
  const dir =
    options.connectionsDir ?? (process.env.NUI_CONNECTIONS_DIR || join(homedir(), ".nui", "connections"));
  const id = options.connectionId ?? (process.env.NUI_CONNECTION_ID || name);
  return join(dir, `${id}.json`);
}

/** Writes the file (tmp + rename, so a reader never sees half of it); returns how to remove it. */
export function writeConnectionFile(path: string, port: number, host = "127.0.0.1"): () => void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(`${path}.tmp`, JSON.stringify({ host, port, session_id: randomUUID(), pid: process.pid }));
  renameSync(`${path}.tmp`, path);
  return () => rmSync(path, { force: true });
}
