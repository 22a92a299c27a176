// The connection file a TCP or HTTP host writes once it listens, so nui or Brain can find it:
// `<dir>/<id>.json` = {host, port, session_id, pid, token}. dir: NUI_CONNECTIONS_DIR, else ~/.nui/connections.
// id: NUI_CONNECTION_ID (from ext:<extension>/<harness-id>), else the agent's name.
// `token` is Brain's addition: the host's port answers every process on this machine, so the host serves only a
// client that presents it (TCP: `harness.authenticate`, HTTP: `Authorization: Bearer`), and the file that holds it
// is readable by its owner alone.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
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

/** A fresh secret for a host's connection file. */
export function connectionToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Whether `sent` is `token`; compared as digests: the same length whatever was sent, no early exit. */
export function sameToken(sent: unknown, token: string): boolean {
  if (typeof sent !== "string") return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(sent), digest(token));
}

/**
 * Writes the file (tmp + rename, so a reader never sees half of it), readable by its owner only, as its token
 * must be; returns how to remove it.
 */
export function writeConnectionFile(
  path: string,
  port: number,
  host = "127.0.0.1",
  token?: string,
): () => void {
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  const info = { host, port, session_id: randomUUID(), pid: process.pid, ...(token ? { token } : {}) };
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 });
  // The mode given at creation passes through the umask; this one does not.
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return () => rmSync(path, { force: true });
}
