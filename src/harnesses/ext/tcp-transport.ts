// A TCP connection to an extension host found through its connection file: JSON-RPC lines both ways. One
// connection per session, kept across runs; the host may serve other sessions too. A host whose connection file
// names a token first gets it in `harness.authenticate`: its port answers every process on this machine, and
// that token is what tells Brain from them.
import { connect } from "node:net";
import { HarnessError } from "../../core/harness.js";
import { clip, RpcError } from "../../protocol/jsonrpc.js";
import { FramingError } from "../../protocol/ndjson.js";
import { HARNESS_METHODS } from "../../protocol/nui/jsonrpc.js";
import { ReadGate } from "../read-gate.js";
import { hostPeer } from "./rpc-peer.js";
import type { RpcTransport, Timeouts, TransportEvents } from "./transport.js";

/**
 * `hostEnd`: how the host ended, when it did within `ms` (see SharedHost.endOfCurrent), for the message of a
 * connection it closed.
 */
export async function dialTcpHost(
  where: { host: string; port: number; path?: string; token?: string },
  name: string,
  timeouts: Timeouts,
  events: TransportEvents,
  hostEnd?: (ms: number) => Promise<string | undefined>,
): Promise<RpcTransport> {
  const socket = connect({ host: where.host, port: where.port });
  const address = `${where.host}:${where.port}${where.path ? ` (from ${where.path})` : ""}`;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new HarnessError(
          "brain_error",
          `${name}: no TCP connection to ${address} within ${timeouts.openMs / 1000} s`,
        ),
      );
    }, timeouts.openMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(
        new HarnessError(
          "brain_error",
          `${name}: could not connect to the extension host at ${address}: ${err.message}`,
        ),
      );
    });
  });
  let fatal: string | undefined;
  // The connection is not read while the session's log is behind (see ReadGate): checked once per chunk, after
  // the session appended the chunk's events. One connection per session: pausing it holds up no other session.
  const gate = new ReadGate(() => socket);
  const backlog = events.backlog;
  const check = () => gate.check("", backlog);
  const fail = (reason: string) => {
    if (fatal) return;
    gate.stop();
    fatal = reason;
    peer.fail(new HarnessError("brain_error", reason));
    socket.destroy();
    events.onFatal(reason);
  };
  const peer = hostPeer(
    (text) => {
      if (!fatal) socket.write(text);
    },
    events,
    () => socket.writableLength,
  );
  socket.on("data", (chunk: Buffer) => {
    if (fatal) return;
    gate.read();
    try {
      peer.feed(chunk);
    } catch (err) {
      // What handling a host's output throws ends that connection, never the daemon.
      if (err instanceof FramingError) fail(`${name}: broken framing from ${address}: ${err.message}`);
      else fail(`${name}: Brain could not handle the output of ${address}: ${(err as Error).message}`);
    }
    if (backlog) queueMicrotask(check);
  });
  let lost = false;
  const onLost = (why: string) => {
    if (lost) return;
    lost = true;
    if (!hostEnd || fatal) return fail(why);
    // Said with how the host ended, once that is known: its exit code and stderr say why, the lost connection not.
    void hostEnd(timeouts.shutdownMs).then((end) => fail(end ? `${why}: ${end}` : why));
  };
  socket.on("error", (err) => onLost(`${name}: connection to ${address} failed: ${err.message}`));
  socket.on("close", () => onLost(`${name}: the extension host at ${address} closed the connection`));
  if (where.token !== undefined) {
    try {
      await peer.request(HARNESS_METHODS.authenticate, { token: where.token }, timeouts.openMs);
    } catch (err) {
      socket.destroy();
      const why = err instanceof RpcError ? err.message : (fatal ?? (err as Error).message);
      throw new HarnessError(
        "brain_error",
        `${name}: the extension host at ${address} did not take the token of its connection file (${clip(why)}); start the host again so that it writes a fresh file`,
      );
    }
  }
  return {
    peer,
    isAlive: () => fatal === undefined && !lost,
    afterRead: (ms, fire) => gate.afterRead(ms, fire),
    abandon: () =>
      fail(`${name}: dropped the connection to ${address}: the host did not end an interrupted run`),
    async close() {
      fatal ??= "closed";
      gate.stop();
      peer.fail(new HarnessError("brain_error", `${name}: connection closed`));
      socket.end();
      setTimeout(() => socket.destroy(), timeouts.shutdownMs).unref();
    },
  };
}
