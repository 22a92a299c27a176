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
// The host keeps no pipe: each goes with its message, so a runner sees EOF on stdin when Brain closes its end.
// It exits when Brain goes (the channel closes); runners it started are Brain's, and end when their stdin does.
// Imports nothing but Node's own modules: it should stay as small as a Node process can be.
import { spawn } from "node:child_process";

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
  child.on("exit", (code, signal) => send({ id, exit: [code, signal] }));
}

process.on("message", (request: SpawnRequest) => {
  try {
    start(request);
  } catch (err) {
    // Bad arguments (spawn throws before any "error" event): the request fails, the host goes on.
    send({ id: request.id, error: (err as Error).message, code: (err as NodeJS.ErrnoException).code });
  }
});
process.on("disconnect", () => process.exit(0));
