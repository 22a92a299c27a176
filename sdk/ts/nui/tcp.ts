// Serving over TCP on 127.0.0.1 (`transport: tcp`): one JSON-RPC conversation per connection, the connection
// file written once listening and removed on shutdown. The port answers every process on this machine, so a
// connection is served only once it presented the token of the connection file (`harness.authenticate`).
import { createServer, type Socket } from "node:net";
import type { NuiAgent } from "./agent.js";
import { connectionFile, connectionToken, writeConnectionFile } from "./connection-file.js";
import { RpcConnection } from "./rpc.js";

const AUTHENTICATE_WITHIN_MS = 30_000;
/** The longest first line an unauthenticated connection may send, in bytes (as the Python SDK counts it). */
const MAX_AUTHENTICATE_BYTES = 64 * 1024;

export interface TcpServing {
  port: number;
  path: string;
  /** Resolves once the server stopped (harness.shutdown, SIGTERM, or close()). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export function serveTcp(
  agent: NuiAgent,
  options: { connectionsDir?: string; connectionId?: string } = {},
): Promise<TcpServing> {
  const sockets = new Set<Socket>();
  const token = connectionToken();
  let removeFile = () => {};
  let stopped: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const server = createServer((socket) => {
    sockets.add(socket);
    // Bytes, not text: the reader decodes each whole line, and the caps count bytes.
    const refuse = (why: string) => {
      process.stderr.write(`[${agent.name}] refused a connection: ${why}\n`);
      socket.destroy();
    };
    const connection = new RpcConnection(
      agent,
      (line) => socket.write(line),
      () => void close(),
      { token, refused: () => socket.end(() => socket.destroy()) },
    );
    // Until it authenticates, a connection may be anyone's: it gets a while and a short first line, not more.
    const deadline = setTimeout(() => {
      if (!connection.authenticated)
        refuse(`no harness.authenticate within ${AUTHENTICATE_WITHIN_MS / 1000} s`);
    }, AUTHENTICATE_WITHIN_MS);
    let unauthenticatedBytes = 0;
    socket.on("data", (chunk: Buffer) => {
      if (!connection.authenticated) {
        unauthenticatedBytes += chunk.length;
        if (unauthenticatedBytes > MAX_AUTHENTICATE_BYTES && !chunk.includes(0x0a))
          return refuse(`its first line is over ${MAX_AUTHENTICATE_BYTES} bytes`);
      }
      // A line over the cap: nothing after it can be split reliably, so the connection ends.
      if (!connection.feed(chunk)) socket.destroy();
    });
    socket.on("close", () => {
      clearTimeout(deadline);
      sockets.delete(socket);
      connection.end();
    });
    socket.on("error", () => {});
  });
  const close = async () => {
    removeFile();
    for (const socket of sockets) socket.end();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    stopped();
  };
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      const path = connectionFile(agent.name, options);
      removeFile = writeConnectionFile(path, port, "127.0.0.1", token);
      process.once("SIGTERM", () => void close());
      resolve({ port, path, closed, close });
    });
  });
}
