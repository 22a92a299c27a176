// A TCP or HTTP extension host serves every session of its harness. Brain finds it through its connection
// file; when there is none (or only a stale one) and the manifest gives a command, Brain starts it, waits for
// the file, and stops it when the harness family closes (harness.shutdown / POST /shutdown first).
import { connect } from "node:net";
import { HarnessError } from "../../core/harness.js";
import type { Spawner } from "../process/spawner.js";
import {
  type ConnectionLookup,
  describeLookup,
  findConnection,
  removeStale,
  waitForConnection,
} from "./connection-file.js";
import { type HostCommand, HostProcess } from "./host-process.js";

export interface HostAddress {
  host: string;
  port: number;
  /** The connection file it came from, for messages. */
  path?: string;
  /** What the host requires before it serves a connection (its connection file's `token`). */
  token?: string;
}

export interface SharedHostSpec {
  ref: string;
  connectionId: string;
  /** Where to look for the connection file, in order. */
  connectionDirs: string[];
  /** A fixed address from the manifest (http with a port): no connection file, nothing to start. */
  fixed?: HostAddress;
  /** How to start the host; resolves the command with its environment. Absent: Brain never starts it. */
  command?: () => Promise<HostCommand>;
  /** Where the host is started (see Spawner); none: forked from Brain. */
  spawner?: Spawner;
  openMs: number;
}

export class SharedHost {
  private process: HostProcess | undefined;
  private starting: Promise<HostAddress> | undefined;

  constructor(private readonly spec: SharedHostSpec) {}

  /** Whether Brain started the host that runs now. */
  get started(): boolean {
    return this.process?.alive === true;
  }

  async ensure(): Promise<HostAddress> {
    if (this.spec.fixed) return this.withToken(this.spec.fixed);
    this.starting ??= this.locate().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /**
   * For a connection to the host that runs now, should it close: how that host ended (its exit and the last of its
   * stderr) when Brain started it and it exits within `ms`, else undefined (a host Brain did not start, one that
   * lives on). A host that dies closes its connections first: its exit is seen a moment later.
   */
  endOfCurrent(): (ms: number) => Promise<string | undefined> {
    // One Brain started that has exited is not the host this connection reached (someone else's, found by its file).
    const host = this.process?.alive ? this.process : undefined;
    return async (ms) => {
      if (!host) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const reason = await Promise.race([
        host.exited,
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), ms);
        }),
      ]);
      clearTimeout(timer);
      return reason === undefined ? undefined : host.describe(reason);
    };
  }

  /** Stops the host Brain started (after `shutdown`, the protocol's polite request), if it runs. */
  async stop(shutdown: (address: HostAddress) => Promise<void>, graceMs: number): Promise<void> {
    const host = this.process;
    this.process = undefined;
    if (!host?.alive) return;
    const lookup = await findConnection(this.spec.connectionDirs, this.spec.connectionId);
    if (lookup.state === "ready") await shutdown(addressOf(lookup)).catch(() => {});
    await host.stop(graceMs);
  }

  /**
   * A fixed address, with the token of a connection file that names the same port: a host on Brain's SDK that
   * writes one (NUI_CONNECTION_ID set) requires its token, wherever Brain learnt its port.
   */
  private async withToken(fixed: HostAddress): Promise<HostAddress> {
    const lookup = await findConnection(this.spec.connectionDirs, this.spec.connectionId);
    if (lookup.state !== "ready" || lookup.info.port !== fixed.port || lookup.info.token === undefined)
      return fixed;
    return { ...fixed, token: lookup.info.token };
  }

  private async locate(): Promise<HostAddress> {
    const { ref, connectionId, connectionDirs } = this.spec;
    const lookup = await findConnection(connectionDirs, connectionId);
    if (lookup.state === "ready") {
      const address = addressOf(lookup);
      // A file whose pid runs may still be a gone host's (after a reboot its pid names some other process): every
      // turn was refused at its port, and Brain, able to start the host, never did. Nothing bound there: stale.
      if (!this.spec.command || (await accepts(address))) return address;
      await removeStale({ state: "stale", path: lookup.path, pid: lookup.info.pid ?? 0 });
    } else {
      if (!this.spec.command) throw new HarnessError("brain_error", `${ref}: ${describeLookup(lookup, ref)}`);
      await removeStale(lookup);
    }
    if (!this.process?.alive) {
      this.process = new HostProcess(await this.spec.command(), this.spec.spawner);
      // Nothing of the protocol comes on a shared host's stdout, but unread it fills its pipe, and then the host's
      // next write to it (an agent's print) blocks it, with every session's run in it.
      this.process.onStdout(() => {});
    }
    const host = this.process;
    try {
      const ready = await waitForConnection(connectionDirs, connectionId, this.spec.openMs, () =>
        host.alive ? undefined : "the host exited",
      );
      return addressOf(ready);
    } catch (err) {
      host.kill();
      throw new HarnessError(
        "brain_error",
        `starting the host of ${ref}: ${host.describe((err as Error).message)}`,
      );
    }
  }
}

/**
 * Whether something listens at `address`, unless it surely does not: only a refused connection (nothing bound to
 * the port) says no; a timeout or any other error is left to the dial, which names it.
 */
function accepts(address: HostAddress): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address.host, port: address.port });
    const done = (listening: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(listening);
    };
    const timer = setTimeout(() => done(true), PROBE_MS);
    socket.once("connect", () => done(true));
    socket.once("error", (err: NodeJS.ErrnoException) => done(err.code !== "ECONNREFUSED"));
  });
}

const PROBE_MS = 2_000;

function addressOf(lookup: Extract<ConnectionLookup, { state: "ready" }>): HostAddress {
  const { host, port, token } = lookup.info;
  return { host, port, path: lookup.path, ...(token !== undefined ? { token } : {}) };
}
