// The way back in: a server the sandboxed command starts on 127.0.0.1 (opencode's HTTP API) is only reachable
// inside the namespace. The launcher watches the namespace's listening TCP sockets and, for each new port,
// opens `<dir>/<port>.sock`, a Unix socket relayed to it; on the host side, the sandbox watches `<dir>` and
// listens on 127.0.0.1:<port> for each socket that appears. A client on the host then connects to the port the
// server chose, as if there were no namespace.
import { readFileSync } from "node:fs";

/** The ports a sandboxed command's port-0 servers and connections get: below Linux's ephemeral range (32768-). */
export const NAMESPACE_PORTS = [20000, 29999] as const;

/** Listening TCP ports on loopback or any address, from /proc/net/tcp{,6} of the current network namespace. */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local || fields[3] !== "0A") continue; // 0A: LISTEN
      const port = Number.parseInt(local.split(":").pop() ?? "", 16);
      if (Number.isInteger(port) && port > 0) ports.add(port);
    }
  }
  return ports;
}
