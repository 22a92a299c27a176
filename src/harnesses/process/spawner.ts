// Starts runners from a spawn host (spawn-host.ts) instead of from Brain's own process. libuv spawns with
// fork(2): the kernel copies Brain's page tables and write-protects every page, and each page Brain writes
// afterwards faults once to be made writable again. Measured here, a fork of a process with 200 MB touched cost
// 680 ms of faults once it wrote to them again (13 µs a page on this VM), and a session's own runner start
// halved the rate at which its first turns' deltas were relayed (the log's buffers, the heap's pages: all
// faulting afresh). The host is forked once, when the first runner is wanted; every start after that is a
// message, and the runner's pipes come back as handles.
import { type ChildProcess, fork } from "node:child_process";
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { join } from "node:path";
import { installRoot } from "../../core/install-root.js";
import { minimalEnvironment } from "./environment.js";
import type { SpawnRecords } from "./spawn-records.js";
import type { RunnerLaunch } from "./started-runner.js";

/** What RunnerProcess needs of a child process: what a ChildProcess with piped stdio has, and a RemoteChild. */
export interface RunnerChild {
  readonly pid?: number | undefined;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly stdin: NodeJS.WritableStream & {
    cork(): void;
    uncork(): void;
    destroy(): void;
    readonly destroyed: boolean;
    /** Bytes written and not yet taken by the child. */
    readonly writableLength: number;
  };
  readonly stdout: NodeJS.ReadableStream & { destroy(): void };
  readonly stderr: NodeJS.ReadableStream & { destroy(): void };
  on(event: "error", listener: (err: Error) => void): this;
  on(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  kill(signal?: NodeJS.Signals): boolean;
  ref(): void;
  unref(): void;
}

type HostMessage =
  | { id: number; pid: number; fd: 0 | 1 | 2 }
  | { id: number; error: string; code?: string }
  | { id: number; exit: [number | null, NodeJS.Signals | null] };

/** What the spawn host starts (its message, less the id). */
export interface SpawnRequest {
  command: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
  detached: boolean;
}

export function spawnHostPath(): string {
  return join(installRoot(), "dist/src/harnesses/process/spawn-host.js");
}

/** A runner started by the spawn host: its pipes are sockets here; its exit is reported by the host. */
export class RemoteChild extends EventEmitter implements RunnerChild {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  pid: number | undefined;
  stdin!: Socket;
  stdout!: Socket;
  stderr!: Socket;
  private readonly pipes: Socket[] = [];
  private held = true;
  private closed = false;

  constructor(private readonly spawner: Spawner) {
    super();
  }

  /** Sends `signal` to the runner itself (RunnerProcess signals its group with process.kill(-pid)). */
  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    if (this.pid === undefined || this.exitCode !== null || this.signalCode !== null) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  ref(): void {
    if (!this.held && !this.closed) this.spawner.hold(+1);
    this.held = true;
  }

  unref(): void {
    if (this.held && !this.closed) this.spawner.hold(-1);
    this.held = false;
  }

  /** A pipe arrived; resolves the start once all three are here. */
  pipe(fd: 0 | 1 | 2, pid: number, socket: Socket): boolean {
    this.pid = pid;
    this.pipes[fd] = socket;
    if (this.pipes.filter(Boolean).length < 3) return false;
    [this.stdin, this.stdout, this.stderr] = this.pipes as [Socket, Socket, Socket];
    return true;
  }

  /** The host went away before all three pipes came: those that did are closed. */
  abandon(): void {
    for (const pipe of this.pipes) pipe?.destroy();
  }

  /**
   * The runner exited (`exit`), or the host went away and its exit will never be told (undefined): "close"
   * follows once stdout and stderr are closed too, as a ChildProcess's does, so no output is lost.
   */
  exited(exit: [number | null, NodeJS.Signals | null] | undefined): void {
    if (exit) {
      [this.exitCode, this.signalCode] = exit;
      this.emit("exit", ...exit);
    }
    let open = 0;
    const closed = () => {
      if (--open === 0) this.close(exit);
    };
    for (const stream of [this.stdout, this.stderr]) {
      if (stream.closed || stream.destroyed) continue;
      // As a ChildProcess at its exit: output nobody reads is drained, or its pipe would never close.
      if (stream.readable && stream.listenerCount("readable") === 0) stream.resume();
      open++;
      stream.once("close", closed);
    }
    if (open === 0) this.close(exit);
  }

  private close(exit: [number | null, NodeJS.Signals | null] | undefined): void {
    if (this.closed) return;
    this.closed = true;
    if (this.held) this.spawner.hold(-1);
    this.emit("close", ...(exit ?? [null, null]));
  }
}

interface Pending {
  child: RemoteChild;
  /** The host asked to start it. */
  host: ChildProcess;
  /** In a process group of its own: recorded while it runs (spawn-records.ts). */
  group: boolean;
  resolve(child: RemoteChild): void;
  reject(err: Error): void;
}

/**
 * One spawn host and the runners it started. Not started until the first spawn; started again at the next spawn
 * if it died, or after its last user released it (runners it started are not touched: their owners stop them).
 * Runners outlive a host that dies (their pipes are Brain's): only their exit status is lost then, and their
 * "close" comes when their output ends. Brain dying is another matter: the host stops them (spawn-host.ts).
 */
export class Spawner {
  private host: ChildProcess | undefined;
  private nextId = 0;
  /** Started or starting runners, by request id, until their exit (or the host's) is known. */
  private readonly live = new Map<number, Pending>();
  /** Requests and held runners: while any, the host's channel keeps Brain's event loop alive. */
  private holds = 0;
  /** Owners (factories) that have not released it; at none, the host is ended. */
  private users = 0;

  /** `records`: where the groups it starts are written down, for a later Brain to stop if this one dies. */
  constructor(
    private readonly hostPath = spawnHostPath(),
    private readonly records?: SpawnRecords,
  ) {}

  /** Counts an owner in; the returned function counts it out, and ends the host after the last one. */
  use(): () => void {
    this.users++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.users === 0) this.release();
    };
  }

  /**
   * Ends the host and leaves its runners to their owners: told first, since a host whose channel closes
   * untold takes Brain for dead and stops them. The channel closes once the message is written.
   */
  private release(): void {
    const host = this.host;
    if (!host?.connected) return;
    // The next spawn starts a new host: this one exits at the disconnect.
    this.host = undefined;
    host.send({ release: true }, () => {
      if (host.connected) host.disconnect();
    });
  }

  /** Starts `launch` as spawnRunner does (minimal environment, its own process group, pipes on 0-2). */
  spawn(launch: RunnerLaunch): Promise<RemoteChild> {
    return this.start({
      command: launch.command,
      args: launch.args,
      ...(launch.cwd !== undefined ? { cwd: launch.cwd } : {}),
      env: minimalEnvironment(process.env, launch.env),
      detached: true,
    });
  }

  /** Starts `command args` with exactly `env`, pipes on 0-2, in its own process group when `detached`. */
  start(request: SpawnRequest): Promise<RemoteChild> {
    const host = this.ensureHost();
    const id = ++this.nextId;
    const child = new RemoteChild(this);
    this.hold(+1);
    return new Promise<RemoteChild>((resolve, reject) => {
      this.live.set(id, { child, host, group: request.detached, resolve, reject });
      host.send({ id, ...request });
    });
  }

  /** The host's pid, while it runs (tests). */
  get hostPid(): number | undefined {
    return this.host?.pid;
  }

  /** Counts a held runner or request in (+1) or out (-1); refs the channel while any. */
  hold(delta: number): void {
    this.holds += delta;
    const channel = this.host?.channel as { ref?(): void; unref?(): void } | undefined;
    if (this.holds > 0) {
      this.host?.ref();
      channel?.ref?.();
    } else {
      this.host?.unref();
      channel?.unref?.();
    }
  }

  private ensureHost(): ChildProcess {
    if (this.host?.connected) return this.host;
    const host = fork(this.hostPath, [], {
      // Not Brain's flags (a profiler, a loader): the host only spawns.
      execArgv: [],
      env: minimalEnvironment(process.env),
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    host.on("message", (message: HostMessage, handle?: Socket) => this.onMessage(message, handle));
    host.on("error", () => {}); // a failed fork or send: "exit" follows, handled there
    host.on("exit", (code, signal) =>
      this.lost(host, signal ? `was killed by ${signal}` : `exited with code ${code}`),
    );
    this.host = host;
    this.hold(0);
    return host;
  }

  private onMessage(message: HostMessage, handle?: Socket): void {
    const entry = this.live.get(message.id);
    if (!entry) return;
    if ("fd" in message) {
      if (message.fd === 0 && entry.group) this.records?.add(message.pid);
      if (handle && entry.child.pipe(message.fd, message.pid, handle)) entry.resolve(entry.child);
    } else if ("error" in message) {
      this.live.delete(message.id);
      this.hold(-1);
      const err: NodeJS.ErrnoException = new Error(message.error);
      if (message.code) err.code = message.code;
      entry.reject(err);
    } else {
      this.live.delete(message.id);
      // Its owner kills what is left of the group as the leader closes (RunnerProcess, CliProcess).
      if (entry.group && entry.child.pid !== undefined) this.records?.remove(entry.child.pid);
      entry.child.exited(message.exit);
    }
  }

  /** The host is gone: requests not answered fail; started runners close when their output ends. */
  private lost(host: ChildProcess, how: string): void {
    if (this.host === host) this.host = undefined;
    for (const [id, entry] of this.live) {
      if (entry.host !== host) continue;
      this.live.delete(id);
      if (entry.child.stdout) entry.child.exited(undefined);
      else {
        entry.child.abandon();
        this.hold(-1);
        entry.reject(new Error(`Brain's spawn host (${this.hostPath}) ${how} before the runner was started`));
      }
    }
  }
}
