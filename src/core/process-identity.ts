// Which process a pid names: a pid is reused once its process is gone, so a record of "process 1234" (a lock's
// holder, a process group Brain started) carries the process's start time as well, and a later check asks for
// both.
import { readFileSync } from "node:fs";

/** Linux: boot id + the process's start time in clock ticks, which no later process with this pid shares. */
export function processStart(pid: number): string | undefined {
  const starttime = statFields(pid)?.[19];
  if (starttime === undefined) return undefined;
  try {
    return `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}:${starttime}`;
  } catch {
    return undefined;
  }
}

/** The process group `pid` is in (Linux), undefined when it cannot be read. */
export function processGroup(pid: number): number | undefined {
  const group = statFields(pid)?.[2];
  return group === undefined ? undefined : Number(group);
}

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses): state first
 * (field 3), then ppid, pgrp, … starttime at index 19 (field 22).
 */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
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
  const state = statFields(pid)?.[0];
  if (state === "Z" || state === "X") return false; // exited, not yet reaped: it writes nothing more
  if (start === undefined) return true;
  const now = processStart(pid);
  return now === undefined || now === start;
}
