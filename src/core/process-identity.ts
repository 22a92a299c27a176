// Which process a pid names: a pid is reused once its process is gone, so a record of "process 1234" (a lock's
// holder, a process group Brain started) carries the process's start time as well, and a later check asks for
// both.
import { readFileSync } from "node:fs";

/** Linux: boot id + the process's start time in clock ticks, which no later process with this pid shares. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return `${boot}:${fields[19]}`;
  } catch {
    return undefined;
  }
}

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

export function processAlive(pid: number, start: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists, as another user's process.
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const state = processState(pid);
  if (state === "Z" || state === "X") return false; // exited, not yet reaped: it writes nothing more
  if (start === undefined) return true;
  const now = processStart(pid);
  return now === undefined || now === start;
}
