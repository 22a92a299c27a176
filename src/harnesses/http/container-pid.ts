// A new container's init, found in /proc rather than by `docker inspect`: a docker command costs a CLI start and
// an API round trip (90–240 ms on a loaded machine) on the path from `docker run` to the agent's first event. Each
// process's /proc/PID/cgroup names its container's full id (cgroupfs: /docker/<id>; systemd: docker-<id>.scope),
// and the container's init is the one process in it whose parent is outside it. Anything unclear (no /proc,
// another layout, a cgroup namespace that hides the path, a `docker exec` beside the init) gives undefined, and
// the caller asks Docker as before.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const FULL_ID = /^[0-9a-f]{64}$/;
/** Files read at once: a host with thousands of processes must not run out of descriptors. */
const BATCH = 64;

/** The host pid of container `id`'s init (`id` as `docker run -d` prints it), or undefined when unsure. */
export async function containerInit(id: string, proc = "/proc"): Promise<number | undefined> {
  if (!FULL_ID.test(id)) return undefined;
  let entries: string[];
  try {
    entries = await readdir(proc);
  } catch {
    return undefined;
  }
  const pids = entries.filter((e) => /^\d+$/.test(e));
  const inside = new Set<number>();
  for (let i = 0; i < pids.length; i += BATCH) {
    await Promise.all(
      pids.slice(i, i + BATCH).map(async (pid) => {
        const cgroup = await readFile(join(proc, pid, "cgroup"), "utf8").catch(() => "");
        if (cgroup.includes(id)) inside.add(Number(pid));
      }),
    );
  }
  const roots: number[] = [];
  for (const pid of inside) {
    const parent = await parentOf(proc, pid);
    if (parent !== undefined && !inside.has(parent)) roots.push(pid);
  }
  return roots.length === 1 ? roots[0] : undefined;
}

async function parentOf(proc: string, pid: number): Promise<number | undefined> {
  const stat = await readFile(join(proc, String(pid), "stat"), "utf8").catch(() => "");
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")".
  const close = stat.lastIndexOf(")");
  if (close < 0) return undefined;
  const ppid = Number(stat.slice(close + 2).split(" ")[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
}
