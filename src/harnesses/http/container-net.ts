// The host half of a `network: "none"` container's bridge: the container has no interface but its loopback, so
// Brain reaches its agent, and the container reaches the host ports the operator listed, through Unix socket
// files in a private directory joined to the container's loopback by netns-relay.js, which Brain starts inside
// the container's network namespace with nsenter. Every packet stays on loopbacks and in socket files. Brain
// reaches the agent on its socket file, not through a port of this host's loopback, unless a port is asked for:
// such a port answers every local user, and an agent written for nui checks no token.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HarnessError } from "../../core/harness.js";
import { installRoot } from "../../core/install-root.js";
import { exposeOnUnixSocket, listenRelay, type Relay } from "./socket-relay.js";

/** The compiled relay program, run by path (from source under vitest too, it is the built copy in dist/). */
export function netnsRelayJs(): string {
  return join(installRoot(), "dist/src/harnesses/http/netns-relay.js");
}

/** The harnesses that can do without the bridge, and how. */
const NETWORK_FIX: Record<string, string> = {
  docker: ', or set network: "published"',
  devcontainer: ', or set network: "bridge"',
};

export class ContainerNet {
  private constructor(
    /** The agent's base URL on this host's loopback ("" when no port was asked for). */
    readonly url: string,
    /** The socket file (in a directory only this user enters) that reaches the agent, when a port was exposed. */
    readonly agentSocket: string | undefined,
    private readonly dir: string,
    private readonly child: ChildProcess,
    private readonly relays: Relay[],
  ) {}

  /**
   * Bridges the network namespace of process `pid` (the container's init): its 127.0.0.1:`containerPort`
   * (when given) becomes a socket file here (`agentSocket`) and, when `agentPort` is given, a loopback URL too (on
   * that port, or on one the OS picks for 0), and each of `hostPorts` on
   * this host's 127.0.0.1 answers on the container's 127.0.0.1 at the same port, and each of `served` (a Unix
   * socket a server of Brain's listens on, such as a session's own NUI_API_URL) on the container's 127.0.0.1 at
   * its port.
   */
  static async open(
    pid: number,
    containerPort: number | undefined,
    hostPorts: number[],
    harness: string,
    agentPort?: number,
    served: { port: number; socket: string }[] = [],
  ): Promise<ContainerNet> {
    const dir = mkdtempSync(join(tmpdir(), "brain-container-"));
    const relays: Relay[] = [];
    let child: ChildProcess | undefined;
    try {
      const agentSocket = join(dir, "agent.sock");
      const args = containerPort ? ["--expose", `${containerPort}=${agentSocket}`] : [];
      const hostSockets = hostPorts.map((port) => [port, join(dir, `host-${port}.sock`)] as const);
      for (const [port, socket] of [...hostSockets, ...served.map((s) => [s.port, s.socket] as const)]) {
        args.push("--listen", `${port}=${socket}`);
      }
      // The relay (a node process: the slow part) starts first; this side's listeners are made while it does.
      // The container connects to a host socket only once its agent runs, and this side's agent port is used
      // only after the relay is ready.
      child = spawn(
        "nsenter",
        [`--net=/proc/${pid}/ns/net`, "--", process.execPath, netnsRelayJs(), ...args],
        { stdio: ["pipe", "pipe", "pipe"] },
      );
      const settled = await Promise.allSettled([
        ready(child, harness),
        containerPort && agentPort !== undefined ? listenRelay(agentPort, agentSocket) : undefined,
        ...hostSockets.map(([port, socket]) => exposeOnUnixSocket(port, socket)),
      ]);
      for (const s of settled.slice(1)) if (s.status === "fulfilled" && s.value) relays.push(s.value);
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) throw failed.reason;
      const agent = settled[1].status === "fulfilled" ? settled[1].value : undefined;
      const url = agent ? `http://127.0.0.1:${agent.port}` : "";
      return new ContainerNet(url, containerPort ? agentSocket : undefined, dir, child, relays);
    } catch (err) {
      child?.kill("SIGKILL");
      await Promise.all(relays.map((r) => r.close()));
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  async close(): Promise<void> {
    // Waited for: once closed, nothing listens on the container's side of a bridged port (ContainerContext.proxied).
    const child = this.child;
    const exited =
      child.exitCode !== null || child.signalCode !== null
        ? undefined
        : new Promise((resolve) => child.once("exit", resolve));
    child.stdin?.end();
    child.kill("SIGTERM");
    await exited;
    await Promise.all(this.relays.map((r) => r.close()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function ready(child: ChildProcess, harness: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    let stderr = "";
    const fail = (why: string) =>
      reject(
        new HarnessError(
          "brain_error",
          `harness "${harness}": a --network none container is reached through its network namespace (nsenter, which needs root on a Linux host), and that failed: ${why}; run Brain as root${NETWORK_FIX[harness] ?? ""}`,
        ),
      );
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolvePromise();
    });
    child.once("error", (err) => fail(err.message));
    child.once("exit", (code) => fail(`the relay exited with ${code}: ${stderr.trim() || "no output"}`));
  });
}
