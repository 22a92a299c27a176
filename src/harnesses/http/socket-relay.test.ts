// The byte relays of a container's network-namespace bridge, against real sockets on this host's loopback.
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { exposeOnUnixSocket, MAX_RELAY_CONNECTIONS, type Relay } from "./socket-relay.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP server on 127.0.0.1 that echoes and keeps every connection open until its client closes it. */
async function holdingServer(): Promise<{ port: number; held: Socket[] }> {
  const held: Socket[] = [];
  const server = createServer((socket) => {
    held.push(socket);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    for (const socket of held) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  return { port: typeof address === "object" && address ? address.port : 0, held };
}

/** Opens a connection to `path` and resolves once it is closed or has carried `text` back. */
function exchange(path: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(path, () => socket.write(text));
    let got = "";
    socket.on("data", (chunk) => {
      got += String(chunk);
      if (got === text) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve(got));
  });
}

describe("a Unix socket relayed to a loopback port", () => {
  it("carries at most MAX_RELAY_CONNECTIONS connections at once: one more is refused, and carried once the others close", async () => {
    const { port, held } = await holdingServer();
    const path = join(tempDir("brain-relay-"), "host.sock");
    const relay: Relay = await exposeOnUnixSocket(port, path);
    cleanups.push(() => relay.close());
    // A container's process opening connections and never closing them.
    const flood: Socket[] = [];
    cleanups.push(() => {
      for (const socket of flood) socket.destroy();
    });
    for (let i = 0; i < MAX_RELAY_CONNECTIONS; i++) {
      const socket = connect(path);
      socket.on("error", () => {});
      flood.push(socket);
    }
    await expect.poll(() => held.length, { timeout: 30_000 }).toBe(MAX_RELAY_CONNECTIONS);
    expect(await exchange(path, "one more")).toBe("");
    expect(held.length).toBe(MAX_RELAY_CONNECTIONS);
    // The bound is on connections open at once: once the flood closes, connections carry again.
    for (const socket of flood) socket.destroy();
    await expect.poll(() => held.filter((s) => !s.destroyed).length, { timeout: 30_000 }).toBe(0);
    expect(await exchange(path, "again")).toBe("again");
  });
});
