// How busy the machine was with other work while a measurement ran: all busy CPU ticks in /proc/stat minus
// the CPU of this process and its children (the runners), over the same interval, in cores. Linux only; on
// other systems every figure is NaN.
import { readFileSync } from "node:fs";
import { childPids } from "./cleanup.js";

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux this runs on

function machineBusyTicks(): number {
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is counted in user already)
  const fields = readFileSync("/proc/stat", "utf8")
    .split("\n", 1)[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return user + nice + system + irq + softirq + steal;
}

/** utime + stime + cutime + cstime of one process, in ticks (0 when it is gone). */
export function processTicks(pid: number | "self"): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // rest[0] is field 3 (state); utime, stime, cutime, cstime are fields 14 – 17.
    return Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
  } catch {
    return 0;
  }
}

/** This process and all its descendants: runners and watchers are grandchildren, under the spawn host. */
function ownTreeTicks(): number {
  let ticks = processTicks("self");
  const pending = childPids();
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    ticks += processTicks(pid);
    pending.push(...childPids(pid));
  }
  return ticks;
}

/** Below this, 10 ms ticks make the figure noise: stop() gives NaN. */
const MIN_SECONDS = 0.1;

export interface LoadProbe {
  /** Cores' worth of CPU since the probe started (NaN over less than 0.1 s, or where /proc cannot be read). */
  stop(): number;
}

/** Cores used by other processes than this one and its descendants: the load the bench's figures share. */
export const startProbe = (): LoadProbe => probeTicks(() => machineBusyTicks() - ownTreeTicks());

/**
 * Cores the whole machine used, whoever used them: this process, its children, the kernel's own threads working
 * for them (the file system's journal, the network's softirqs), and others.
 */
export const startMachineProbe = (): LoadProbe => probeTicks(machineBusyTicks);

/** How fast `ticks` grows from now until stop(), in cores. */
function probeTicks(ticks: () => number): LoadProbe {
  let ticks0: number;
  try {
    ticks0 = ticks();
  } catch {
    return { stop: () => Number.NaN };
  }
  const t0 = process.hrtime.bigint();
  return {
    stop(): number {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      if (seconds < MIN_SECONDS) return Number.NaN;
      return Math.max(0, (ticks() - ticks0) / TICKS_PER_SECOND / seconds);
    },
  };
}
