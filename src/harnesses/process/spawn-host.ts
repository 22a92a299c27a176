// The spawn host: a small Node process that starts runners for Brain and hands their pipes back (see Spawner).
// It exists because a process that forks copies its page tables and write-protects every page it has: for a
// while after each spawn, every page Brain writes to faults once (libuv spawns with fork(2) on Linux). Forked
// from here instead, a runner's start costs Brain nothing but a message.
//
// Protocol, over the IPC channel Brain forked it with (JSON messages):
//   Brain → host  {id, command, args, cwd?, env, detached}        spawn it: pipes on 0-2, env exactly this
//   host → Brain  {id, pid, fd: 0 | 1 | 2} + the pipe's handle     once per pipe, in order
//   host → Brain  {id, error, code?}                              it could not start (nothing else follows)
//   host → Brain  {id, exit: [code, signal]}                      it exited (after its three pipes were sent)
//   Brain → host  {release: true}                                  Brain is done with it: exit at disconnect
// The host keeps no pipe: each goes with its message, so a runner sees EOF on stdin when Brain closes its end.
// Released, it exits when the channel closes and leaves its runners to their owners. A channel that closes
// unreleased means Brain died (killed, crashed): what it started is stopped then, process group by group
// (SIGTERM, SIGKILL after a grace), since not all of it ends with its stdin (`opencode serve` does not read it)
// and a restarted Brain knows nothing of it. A group is stopped even when its leader has exited: a runner that
// exits at the EOF of Brain's death, or just before it, leaves what it started (a tool's `sleep &`) in its group,
// and Brain, which kills a group when its leader closes, is not there to.
// Imports nothing but Node's own modules: it should stay as small as a Node process can be.
import { spawn } from "node:child_process";

/** How long what it started has to stop after SIGTERM, when Brain died, before SIGKILL. */
const GRACE_MS = 3000;

interface SpawnRequest {
  id: number;
  command: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
  /** In a process group of its own (a runner's, a CLI's): a kill of the group reaches what it started. */
  detached: boolean;
}

/** A socket's libuv handle (internal to Node, and stable for as long as child_process has sent handles). */
interface Unread {
  _handle?: { readStop(): number };
}

/**
 * Runners started, by pid: whether each leads its own process group. One that shares the host's group is
 * forgotten at its exit; a group is forgotten once nothing in it is left (see prune).
 */
const running = new Map<number, boolean>();
let released = false;
let stopping = false;

const send = (message: object, handle?: unknown) =>
  // biome-ignore lint/suspicious/noExplicitAny: the handle is a net.Socket; send's typing wants a narrower one
  process.send?.(message, handle as any, undefined, () => {});

function start(request: SpawnRequest): void {
  const { id } = request;
  const child = spawn(request.command, request.args, {
    ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
    env: request.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: request.detached === true,
  });
  child.on("error", (err: NodeJS.ErrnoException) => send({ id, error: err.message, code: err.code }));
  if (child.pid === undefined) return; // "error" follows
  const pid = child.pid;
  // Node starts reading a child's output pipes the moment it makes sockets of them, and a socket's handle is sent
  // (one at a time, each after the last one's acknowledgement) without what the socket read meanwhile: what the
  // child wrote first was lost, and its exit's EOF could close the pipe here before it was sent at all. Not read
  // here, its output waits in the pipe for Brain. Nothing is read before this: reads happen on later ticks.
  for (const pipe of [child.stdout, child.stderr]) (pipe as unknown as Unread)._handle?.readStop();
  send({ id, pid, fd: 0 }, child.stdin);
  send({ id, pid, fd: 1 }, child.stdout);
  send({ id, pid, fd: 2 }, child.stderr);
  prune();
  running.set(pid, request.detached === true);
  child.on("exit", (code, signal) => {
    // A leader's exit leaves its group until it is empty: what it started may linger.
    if (!stopping && !request.detached) running.delete(pid);
    prune();
    send({ id, exit: [code, signal] });
  });
}

/** Forgets the groups (and runners) that have nothing left running, so that none is signalled after its end. */
function prune(): void {
  if (stopping) return;
  for (const [pid, detached] of running) if (!signal(pid, detached, 0)) running.delete(pid);
}

/** Signals a runner's process group (or the runner, when it shares the host's); false when nothing is left. */
function signal(pid: number, detached: boolean, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(detached ? -pid : pid, name);
    return true;
  } catch {
    return false;
  }
}

/** Brain died: every runner's group gets SIGTERM, and what is left of them after the grace SIGKILL. */
function stopRunners(): void {
  stopping = true;
  for (const [pid, detached] of running) if (!signal(pid, detached, "SIGTERM")) running.delete(pid);
  const deadline = Date.now() + GRACE_MS;
  const check = setInterval(() => {
    for (const [pid, detached] of running) if (!signal(pid, detached, 0)) running.delete(pid);
    if (running.size > 0 && Date.now() < deadline) return;
    for (const [pid, detached] of running) signal(pid, detached, "SIGKILL");
    clearInterval(check);
    process.exit(0);
  }, 50);
}

process.on("message", (request: SpawnRequest | { release: true }) => {
  if ("release" in request) {
    released = true;
    return;
  }
  try {
    start(request);
  } catch (err) {
    // Bad arguments (spawn throws before any "error" event): the request fails, the host goes on.
    send({ id: request.id, error: (err as Error).message, code: (err as NodeJS.ErrnoException).code });
  }
});
// Ctrl-C in a terminal reaches Brain's process group, this host included: it goes when Brain does, not before,
// so that a Brain that dies of it still has its runners stopped.
process.on("SIGINT", () => {});

/** The channel is gone: exit, stopping what it started first unless Brain released it. */
function disconnected(): void {
  clearInterval(watch);
  if (stopping) return;
  prune();
  if (released || running.size === 0) process.exit(0);
  else stopRunners();
}
process.on("disconnect", disconnected);
// Node emits no "disconnect" when the channel closes while a pipe it sent waits for Brain's acknowledgement (it
// defers it until the queue is flushed, which needs that acknowledgement): a Brain killed during a start would
// leave this host, and the runner whose stdin it still holds, running for good. `connected` is false at once.
const watch = setInterval(() => {
  if (!process.connected) disconnected();
}, 250);
