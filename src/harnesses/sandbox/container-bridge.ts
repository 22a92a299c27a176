// What a harness whose program runs in a session's --network none container has of the host: the session's
// credential proxy bridged into the container, or, for a program that talks to its provider itself, the provider's
// loopback port (bridged before the program starts, cut once it turns out to use the proxy: ContainerContext.proxied),
// servers the program starts inside published back to this host's loopback, and a private directory mounted at its
// own path for the tool endpoint. The docker sandbox and the devcontainer harness both open one per session
// container and close it before removing the container.
import { chmodSync, lchownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ContainerContext, ContainerUser } from "../../core/harness.js";
import { ContainerNet } from "../http/container-net.js";

/**
 * A directory only this user may enter, mounted into a session's container at its own path: the tool
 * endpoint's socket and the files that hold its secret live here. It is made inside a parent that only this user
 * may enter either, and that is never handed on: once the directory is handed to the container's user (runAs),
 * a process of this host that has that uid (another local user) still cannot reach it.
 */
export function privateDir(): string {
  const parent = mkdtempSync(join(tmpdir(), "brain-sandbox-"));
  chmodSync(parent, 0o700);
  const dir = join(parent, "tools");
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** Removes a privateDir() with its parent. */
export function removePrivateDir(dir: string): void {
  rmSync(dirname(dir), { recursive: true, force: true });
}

export class ContainerBridge {
  /** What was bridged for the harness (its published servers, its credential proxy), each closed on its own. */
  private readonly opened = new Set<ContainerNet>();
  private net: ContainerNet | undefined;
  readonly context: ContainerContext;

  /**
   * `pid`: the container's init (its network namespace), asked for only when something must cross: a
   * container with nothing to bridge is never entered.
   */
  constructor(
    private readonly pid: () => Promise<number>,
    readonly toolsDir: string,
    private readonly harness: string,
    /** False: this host cannot enter the container's network namespace (not root, and it need not). */
    reaches = true,
  ) {
    this.context = {
      toolsDir,
      node: "node",
      publish: async (port) =>
        this.track(await ContainerNet.open(await this.pid(), port, [], this.harness, port)),
      proxied: async () => {
        const provider = this.net;
        this.net = undefined;
        await provider?.close();
      },
    };
    if (reaches) {
      this.context.reach = async (port) =>
        this.track(await ContainerNet.open(await this.pid(), undefined, [port], this.harness));
    }
  }

  private track(one: ContainerNet): { close(): Promise<void> } {
    this.opened.add(one);
    return {
      close: async () => {
        if (this.opened.delete(one)) await one.close();
      },
    };
  }

  /**
   * The program inside runs as `user`, not as Brain: the tools dir becomes its (still private to it), and so do
   * the tool endpoint's files (ContainerContext.user). Before the context is handed to the harness.
   */
  runAs(user: ContainerUser): void {
    lchownSync(this.toolsDir, user.uid, user.gid);
    this.context.user = user;
  }

  /** Each of `hostPorts` on this host's 127.0.0.1 answers on the container's 127.0.0.1 at the same port. */
  async reach(hostPorts: number[]): Promise<void> {
    if (hostPorts.length === 0) return;
    this.net = await ContainerNet.open(await this.pid(), undefined, hostPorts, this.harness);
  }

  /** Cuts every bridge and removes the private directory. */
  async close(): Promise<void> {
    await Promise.all([this.net, ...this.opened].map((n) => n?.close()));
    this.opened.clear();
    removePrivateDir(this.toolsDir);
  }
}
