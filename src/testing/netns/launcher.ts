// Runs a command inside a loopback-only network namespace with one way out: a relay from 127.0.0.1:<port>
// (inside the namespace) to a Unix socket on the host's filesystem. Path-based Unix sockets are not scoped by
// network namespaces, so a fake provider in the test process stays reachable, and nothing else is.
//
//   unshare -n node launcher.js --port 18080 --socket "$RUN_DIR/provider.sock" -- claude -p …
//
// It brings `lo` up, starts the relay, then runs the command with the launcher's own stdio, forwards the usual
// stop signals, and exits with the command's exit code (128+n for a signal, as a shell would).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { constants } from "node:os";
import { parseArgs } from "node:util";
import { PROXY_VARIABLE } from "../../harnesses/cli/proxy-variable.js";
import { exposeOnUnixSocket, listenRelay, type Relay } from "../../harnesses/http/socket-relay.js";
import { listeningPorts, NAMESPACE_PORTS } from "./publish.js";

const split = process.argv.indexOf("--");
const { values } = parseArgs({
  args: process.argv.slice(2, split < 0 ? undefined : split),
  options: {
    port: { type: "string", multiple: true },
    socket: { type: "string" },
    "publish-dir": { type: "string" },
    "inward-dir": { type: "string" },
  },
});
const command = split < 0 ? [] : process.argv.slice(split + 1);
const ports = (values.port ?? []).map(Number);
if (!values.socket || command.length === 0 || ports.some((p) => !Number.isInteger(p) || p <= 0)) {
  process.stderr.write(
    "usage: launcher.js --port N [--port N]... --socket PATH [--publish-dir DIR] -- COMMAND [ARGS]...\n",
  );
  process.exit(2);
}

const lo = spawnSync("ip", ["link", "set", "lo", "up"], { encoding: "utf8" });
if (lo.status !== 0) {
  process.stderr.write(`netns launcher: "ip link set lo up" failed: ${lo.stderr || lo.error?.message}\n`);
  process.exit(2);
}
// A server that binds port 0 here (opencode serve --port 0) is published on the host's loopback at the same port
// (see publish.ts), but this namespace's ports are picked knowing nothing of the host's. Picked from the host's
// ephemeral range, the port can be held there already (by another test's server on port 0, or a client's
// connection): the host side then fails to listen, and the server's client reaches nothing, or another server,
// until its start times out. Ports below that range are taken on a host only by name.
try {
  writeFileSync("/proc/sys/net/ipv4/ip_local_port_range", `${NAMESPACE_PORTS[0]} ${NAMESPACE_PORTS[1]}\n`);
} catch (err) {
  process.stderr.write(`netns launcher: cannot set the namespace's port range: ${(err as Error).message}\n`);
  process.exit(2);
}
const relays: Relay[] = await Promise.all(ports.map((port) => listenRelay(port, values.socket!)));
// `opencode serve --port 0` tries 4096 before a port the OS picks. Every namespace's 4096 is free, so every
// server would be published on the host's one 4096 at once; held here, each gets a port of its own.
const OPENCODE_FIRST = 4096;
const held = createServer();
await new Promise<void>((resolve) => held.listen(OPENCODE_FIRST, "127.0.0.1", resolve));

// Brain's credential proxy listens on the host's 127.0.0.1 at a port of its own, named in the command's
// environment: asked for by port in <inward-dir>, exposed there by the host (see sandbox.ts), relayed here.
const inwardDir = values["inward-dir"];
const proxyPort = Number(new URL(process.env[PROXY_VARIABLE] ?? "http://x").port);
if (inwardDir && proxyPort > 0 && !ports.includes(proxyPort)) {
  writeFileSync(`${inwardDir}/${proxyPort}.want`, "");
  const socket = `${inwardDir}/${proxyPort}.sock`;
  while (!existsSync(socket)) await new Promise((resolve) => setTimeout(resolve, 20));
  relays.push(await listenRelay(proxyPort, socket));
}

// Servers the command starts are published as <publish-dir>/<port>.sock (see publish.ts).
const publishDir = values["publish-dir"];
if (publishDir) {
  const published = new Set([...ports, OPENCODE_FIRST, proxyPort]); // the proxy's relay is the host's own
  const poll = setInterval(() => {
    for (const port of listeningPorts()) {
      if (published.has(port)) continue;
      published.add(port);
      const path = `${publishDir}/${port}.sock`;
      rmSync(path, { force: true }); // left behind by an earlier process on the same port
      exposeOnUnixSocket(port, path).then(
        (relay) => relays.push(relay),
        () => published.delete(port),
      );
    }
  }, 50);
  poll.unref();
}

const [program, ...args] = command;
const child = spawn(program!, args, { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  process.on(signal, () => child.kill(signal));
}
// If whoever started us dies without stopping us (a crashed test), stop the command too: a server such as
// `opencode serve` does not read stdin, so nothing else would end it.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) {
    child.kill("SIGKILL");
    process.exit(1);
  }
}, 500).unref();
child.on("error", (err) => {
  process.stderr.write(`netns launcher: cannot run ${program}: ${err.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => {
  for (const relay of relays) void relay.close();
  held.close();
  process.exit(code ?? 128 + (signal ? constants.signals[signal] : 15));
});
