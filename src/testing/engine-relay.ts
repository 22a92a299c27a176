// A relay to the real Docker engine's socket that a test can make hang: every request (a hung engine, which takes
// the connection and says nothing), or only the requests whose first line matches a pattern (one step of a
// session's open: `GET /v1.43/info`, the sweep's `GET /containers/json`…), while the rest go through. Brain's
// docker commands reach it by DOCKER_HOST (`env`).
import { createConnection, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { dockerEnvironment } from "../harnesses/http/docker-cli.js";
import { tempDir } from "./brain.js";

const ENGINE = "/var/run/docker.sock";

export interface EngineRelay {
  /** What Brain's docker commands run with to go through the relay. */
  env: NodeJS.ProcessEnv;
  /** From now: hold every new connection ("all"), the requests matching a pattern, or none (undefined). */
  hang(what: "all" | RegExp | undefined): void;
  /** Resolves with the first line of the first request held since the last hang(). */
  held(): Promise<string>;
  /** Lets every held request go on to the engine (a slow engine, not a hung one). */
  release(): void;
  /** Whether every held connection has been closed by its docker command (killed, or ended on its own). */
  heldClosed(): boolean;
  close(): Promise<void>;
}

export async function engineRelay(): Promise<EngineRelay> {
  const path = join(tempDir("brain-engine-relay-"), "docker.sock");
  let hanging: "all" | RegExp | undefined;
  const held: { socket: Socket; closed: boolean; first?: Buffer }[] = [];
  let heldOne: (line: string) => void = () => {};
  let heldLine = new Promise<string>((resolve) => {
    heldOne = resolve;
  });
  const hold = (client: Socket, line: string, first?: Buffer) => {
    const entry = { socket: client, closed: false, ...(first ? { first } : {}) };
    held.push(entry);
    client.on("close", () => {
      entry.closed = true;
    });
    client.on("error", () => {});
    heldOne(line);
  };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    if (hanging === "all") return hold(client, "(a connection)");
    const engine = createConnection(ENGINE);
    let holding = false;
    client.on("data", (chunk: Buffer) => {
      if (holding) return;
      const line = chunk.toString("latin1").split("\r\n", 1)[0] ?? "";
      if (hanging instanceof RegExp && hanging.test(line)) {
        holding = true;
        engine.destroy();
        hold(client, line, chunk);
        return;
      }
      engine.write(chunk);
    });
    engine.pipe(client);
    const end = () => {
      if (holding) return;
      client.destroy();
      engine.destroy();
    };
    client.on("error", end).on("close", end);
    engine.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    env: { ...dockerEnvironment(process.env), DOCKER_HOST: `unix://${path}` },
    hang(what) {
      hanging = what;
      heldLine = new Promise<string>((resolve) => {
        heldOne = resolve;
      });
    },
    held: () => heldLine,
    release() {
      for (const h of held.splice(0)) {
        if (h.closed) continue;
        const engine = createConnection(ENGINE);
        if (h.first) engine.write(h.first);
        h.socket.pipe(engine).pipe(h.socket);
        const end = () => {
          h.socket.destroy();
          engine.destroy();
        };
        h.socket.on("close", end);
        engine.on("error", end).on("close", end);
      }
    },
    heldClosed: () => held.every((h) => h.closed),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
