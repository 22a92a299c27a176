// What tests ask about processes they started: whether one still runs, and waiting until something is so; and a
// node child running a test's script, to be SIGKILLed at a point it tells on its stdout.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";

/** Whether a process runs (signal 0 checks without signalling); a zombie only waits to be reaped: dead. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** Whether any process of group `pgid` runs, zombies aside (a dead leader's group may live on in its children). */
export function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // After the command's closing parenthesis: state, ppid, pgrp.
      const [state, , group] = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ").at(-1)!.split(" ");
      if (Number(group) === pgid && state !== "Z") return true;
    } catch {
      // Gone while listed.
    }
  }
  return false;
}

/** Resolves once `check` holds, looking every 20 ms (the test's own timeout bounds the wait). */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

export interface ScriptChild {
  /** Everything it wrote on its stdout so far. */
  out(): string;
  /** SIGKILLs it; resolves once it is gone (reaped). Harmless once it is. */
  kill(): Promise<void>;
}

/** Runs `script` (an ES module's text) in a node child of its own; its stderr is the test's. */
export function scriptChild(script: string): ScriptChild {
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    out += chunk;
  });
  return {
    out: () => out,
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
