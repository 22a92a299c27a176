// Everything the bench leaves behind is undone on every way out: child processes (ours and the runners Brain
// spawns for us, found through /proc as this process's children) are SIGKILLed, temp dirs are removed, and a
// watchdog bounds the whole run.
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const tempDirs = new Set<string>();
/** What the exit handler kills: our children, and those the bench's spawn host started for us (bench/lib/spawn.ts). */
const spawned = new Set<{ kill(signal?: NodeJS.Signals): boolean }>();

/** A fresh directory under os.tmpdir(), removed by removeTemp() or at exit at the latest. */
export async function makeTemp(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `brain-bench-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export async function removeTemp(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/**
 * Spread into a baseline's spawn options: its child is started as Brain starts a runner, in a session of its own
 * (runner-process.ts: `detached`). With the kernel's autogroup scheduling a session is scheduled as one group, so
 * a child in the parent's session and one in its own share a busy machine's CPU differently (measured: a tool
 * round trip's runner turnaround 140–200 vs 390–470 µs under load); the baselines must not get the better seat.
 */
export const LIKE_BRAIN_RUNNER = { detached: true } as const;

/** A process the exit handler kills, until it closes. */
export function track(child: { kill(signal?: NodeJS.Signals): boolean } & NodeJS.EventEmitter): void {
  spawned.add(child);
  child.once("close", () => spawned.delete(child));
}

/** spawn(), remembered so the exit handler can kill it. */
export function spawnTracked(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, options);
  spawned.add(child);
  child.on("exit", () => spawned.delete(child));
  return child;
}

/** Pids of this process's live children, read from /proc (Linux); empty elsewhere. */
export function childPids(pid = process.pid): number[] {
  const out = new Set<number>();
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  for (const task of tasks) {
    try {
      for (const word of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ")) {
        const child = Number(word);
        if (Number.isInteger(child) && child > 0) out.add(child);
      }
    } catch {
      // the thread ended meanwhile
    }
  }
  return [...out];
}

/** SIGKILLs every child of this process (synchronous: usable from an exit handler). */
export function killChildren(): void {
  for (const child of spawned) child.kill("SIGKILL");
  for (const pid of childPids()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function cleanupSync(): void {
  killChildren();
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort at exit
    }
  }
  tempDirs.clear();
}

/** Installs the exit, signal and crash handlers (each section's watchdog is armed by its runner: watched()). */
export function installCleanup(): void {
  process.on("exit", cleanupSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, cleaning up\n`);
      process.exit(128 + (os.constants.signals[signal] ?? 1));
    });
  }
  process.on("uncaughtException", (err) => {
    process.stderr.write(`bench: uncaught exception: ${err.stack ?? err.message}\n`);
    process.exit(1);
  });
  process.on("unhandledRejection", (err) => {
    process.stderr.write(`bench: unhandled rejection: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  });
}

/**
 * Runs `work` under a watchdog that ends the run (its children killed, its temp dirs removed) when `work` takes
 * more than `ms`, naming `what`. `ms` is for a hang, not for a slow machine: callers scale it with the work asked
 * (calls, rounds, reps), so a loaded machine gives slow figures rather than an abort.
 */
export async function watched<T>(what: string, ms: number, work: () => Promise<T>): Promise<T> {
  const timer = setTimeout(() => {
    process.stderr.write(`bench: watchdog: ${what} took more than ${ms / 1000} s; aborting\n`);
    process.exit(2);
  }, ms);
  timer.unref();
  try {
    return await work();
  } finally {
    clearTimeout(timer);
  }
}

/** Rejects with a clear message when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
