// The inner half of a `network: "none"` container's bridge to the host, run by the docker harness as
//   nsenter --net=/proc/<container pid>/ns/net -- node netns-relay.js --expose 8090=DIR/agent.sock --listen 11434=DIR/host-11434.sock
// It lives in the container's network namespace (whose only interface is its loopback) but in the host's
// filesystem, where path-based Unix sockets cross namespaces: `--expose` serves the container's 127.0.0.1:PORT on
// a socket file the host connects to; `--listen` serves the container's 127.0.0.1:PORT from a socket file the host
// serves (a host port the operator chose, e.g. a local model server). Prints "ready" once all listen; exits when
// its stdin closes, so it never outlives the Brain that started it.
import { parseArgs } from "node:util";
import { exposeOnUnixSocket, listenRelay, type Relay } from "./socket-relay.js";

function pairs(values: string[] | undefined, flag: string): [number, string][] {
  return (values ?? []).map((value) => {
    const at = value.indexOf("=");
    const port = Number(value.slice(0, at));
    if (at < 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
      process.stderr.write(`netns-relay: ${flag} ${value}: expected PORT=SOCKET\n`);
      process.exit(2);
    }
    return [port, value.slice(at + 1)];
  });
}

const { values } = parseArgs({
  options: { expose: { type: "string", multiple: true }, listen: { type: "string", multiple: true } },
});
const relays: Relay[] = [];
try {
  for (const [port, socket] of pairs(values.expose, "--expose"))
    relays.push(await exposeOnUnixSocket(port, socket));
  for (const [port, socket] of pairs(values.listen, "--listen")) relays.push(await listenRelay(port, socket));
} catch (err) {
  process.stderr.write(`netns-relay: ${(err as Error).message}\n`);
  process.exit(1);
}
process.stdout.write("ready\n");
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
