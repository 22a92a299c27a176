// Byte relays between TCP and Unix sockets, both directions of a network-namespace bridge: path-based Unix
// sockets are not scoped by network namespaces, so a socket file joins a loopback in one namespace to a
// loopback in another (the test sandboxes' CLIs, the docker harness's --network none containers).
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

/**
 * Connections one relay carries at once. Whoever is on the far side (a process in a session's container) opens
 * them at will, and each holds two of this process's descriptors (Brain's, for the host half of a bridge) until
 * it closes: unbounded, a container could use up the daemon's descriptors and break every other session. Far
 * above what an agent's provider client or a published server needs; past it a new connection is refused.
 */
export const MAX_RELAY_CONNECTIONS = 256;

export interface Relay {
  /** The TCP port it listens on (a listenRelay asked for port 0 gets one). */
  port?: number;
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

function relay(
  target: () => Socket,
  listen: (server: ReturnType<typeof createServer>, done: () => void) => void,
): Promise<Relay> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = target();
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("error", () => end());
      socket.on("close", () => end());
    }
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.maxConnections = MAX_RELAY_CONNECTIONS;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    listen(server, () =>
      resolve({
        ...portOf(server.address()),
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const socket of open) socket.destroy();
          }),
      }),
    );
  });
}

/** Listens on 127.0.0.1:`port` and forwards each connection to the Unix socket `socketPath`. */
export function listenRelay(port: number, socketPath: string): Promise<Relay> {
  return relay(
    () => connect(socketPath),
    (server, done) => server.listen(port, "127.0.0.1", done),
  );
}

/** Listens on the Unix socket `socketPath` and forwards each connection to 127.0.0.1:`port`. */
export function exposeOnUnixSocket(port: number, socketPath: string): Promise<Relay> {
  return relay(
    () => connect(port, "127.0.0.1"),
    (server, done) => server.listen(socketPath, done),
  );
}

function portOf(address: AddressInfo | string | null): { port?: number } {
  return address && typeof address === "object" ? { port: address.port } : {};
}
