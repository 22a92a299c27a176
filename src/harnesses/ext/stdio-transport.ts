// A stdio extension host: Brain starts it (once per session, at the session's first run, so NUI_RUN_ID names a
// real run) and keeps it for every later run; nui restarts it for each run. `harness.info` is the handshake.
import { HarnessError } from "../../core/harness.js";
import { RpcError } from "../../protocol/jsonrpc.js";
import { FramingError } from "../../protocol/ndjson.js";
import { HARNESS_METHODS } from "../../protocol/nui/jsonrpc.js";
import type { Spawner } from "../process/spawner.js";
import { ReadGate } from "../read-gate.js";
import { type HostCommand, HostProcess } from "./host-process.js";
import { hostPeer } from "./rpc-peer.js";
import type { RpcTransport, Timeouts, TransportEvents } from "./transport.js";

export async function startStdioHost(
  command: HostCommand,
  timeouts: Timeouts,
  events: TransportEvents,
  spawner?: Spawner,
  closed?: AbortSignal,
): Promise<RpcTransport> {
  const host = new HostProcess(command, spawner);
  let fatal: string | undefined;
  // Its stdout is not read while the session's log is behind (see ReadGate): checked once per chunk, after the
  // session appended the chunk's events (in a microtask queued with the first of them).
  const gate = new ReadGate(() => host.stdout);
  const backlog = events.backlog;
  const check = () => gate.check("", backlog);
  // An exited host's output is read to its end however far the log is behind (a ChildProcess, and a spawn host's
  // RemoteChild, resume their stdout at the exit): the gate lets go of its holds then, and pauses no more.
  host.onExit(() => gate.stop());
  const fail = (reason: string) => {
    if (fatal) return;
    gate.stop(); // what it still writes is dropped: drained, it is not left blocked
    fatal = host.describe(reason);
    peer.fail(new HarnessError("brain_error", fatal));
    host.kill();
    events.onFatal(fatal);
  };
  const peer = hostPeer(
    (text) => {
      if (!fatal) host.write(text);
    },
    events,
    () => host.queued,
  );
  host.onStdout((chunk: Buffer) => {
    if (fatal) return;
    gate.read();
    try {
      peer.feed(chunk);
    } catch (err) {
      // What handling a host's output throws ends that host's conversation, never the daemon.
      if (err instanceof FramingError) fail(`broken framing on the host's stdout: ${err.message}`);
      else fail(`Brain could not handle the host's output: ${(err as Error).message}`);
    }
    if (backlog) queueMicrotask(check);
  });
  /** How its stdout ended mid-line ("" when at a line's end): read once, when it ended or the host did. */
  let torn: string | undefined;
  const tornLine = (): string => {
    if (torn === undefined) {
      torn = "";
      try {
        peer.end();
      } catch (err) {
        if (err instanceof FramingError) torn = err.message;
      }
    }
    return torn;
  };
  // It can never answer nor send an event again: the run fails now, not at an interrupt, and the host goes as a
  // dead one does (the next run starts another).
  host.onStdoutClosed(() => {
    const cut = tornLine();
    fail(`extension host for ${command.name} closed its stdout${cut ? `: ${cut}` : ""}`);
  });
  void host.exited.then((reason) => {
    // A line the host left unfinished is lost with it: the error says so, as a runner's does.
    const cut = tornLine();
    fail(`${reason}${cut ? `; its stdout ${cut}` : ""}`);
  });

  // A session closed while its host starts does not wait for the handshake: the host goes at once.
  const onClosed = () => fail("the session was closed while its host started");
  closed?.addEventListener("abort", onClosed, { once: true });
  try {
    if (closed?.aborted) onClosed();
    await peer.request(HARNESS_METHODS.info, {}, timeouts.openMs);
  } catch (err) {
    // A host without harness.info still runs (the protocol needs only harness.run); anything else is fatal.
    if (!(err instanceof RpcError) || err.code !== -32601) {
      const reason = err instanceof RpcError ? `harness.info failed: ${err.message}` : (err as Error).message;
      const message = fatal ?? host.describe(reason);
      host.kill();
      throw new HarnessError("brain_error", `starting ${command.name}: ${message}`);
    }
  } finally {
    closed?.removeEventListener("abort", onClosed);
  }

  return {
    peer,
    ...(command.env.NUI_RUN_ID !== undefined ? { hostRunId: command.env.NUI_RUN_ID } : {}),
    isAlive: () => fatal === undefined && host.alive,
    afterRead: (ms, fire) => gate.afterRead(ms, fire),
    abandon: () => fail(`extension host for ${command.name} was stopped: it did not end an interrupted run`),
    async close() {
      if (!fatal && host.alive) {
        await peer.request(HARNESS_METHODS.shutdown, {}, timeouts.shutdownMs).catch(() => {});
      }
      fatal ??= "closed";
      gate.stop();
      peer.fail(new HarnessError("brain_error", `extension host for ${command.name} was closed`));
      await host.stop(timeouts.shutdownMs);
    },
  };
}
