// Who listens on a local TCP port, from the kernel's socket tables. The admin token of tokens.json goes to any
// loopback URL, and while the daemon is down any local user may bind its port: the CLI would hand that user the
// admin token with its first request. A listener of another user is refused before anything is sent.
import { readFileSync } from "node:fs";

/** /proc/net/tcp's state of a listening socket. */
const LISTEN = "0A";

/**
 * The uids of the sockets listening on `port` in this network namespace (any address: a wildcard listener takes
 * loopback connections too); undefined where the tables cannot be read (not Linux).
 */
export function listenerUids(port: number): number[] | undefined {
  const uids: number[] = [];
  let read = false;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    read = true;
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
      const fields = line.trim().split(/\s+/);
      if (fields.length < 8 || fields[3] !== LISTEN) continue;
      const local = fields[1]!;
      if (Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16) !== port) continue;
      uids.push(Number(fields[7]));
    }
  }
  return read ? uids : undefined;
}

/** Why the admin token must not go to `url`'s listener, or undefined when it may (ours, or none to ask). */
export function foreignListener(url: URL, uid = process.getuid?.()): string | undefined {
  if (uid === undefined) return undefined;
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const other = listenerUids(port)?.find((owner) => owner !== uid);
  if (other === undefined) return undefined;
  return `the process listening on port ${port} is another user's (uid ${other}), not a daemon of yours: the admin token of tokens.json is not sent to it (start \`brain serve\`, or give the daemon's token with --token or $BRAIN_TOKEN)`;
}
