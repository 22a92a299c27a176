// A real process writing a store's logs through its journal (journal.ts), to be SIGKILLed at a chosen point: what
// the journal's crash tests need of the process whose acknowledged events only its journal holds.
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect } from "vitest";

export interface JournalingChild {
  /** Everything it wrote on its stdout so far. */
  out(): string;
  /** SIGKILLs it; resolves once it is gone (reaped). Harmless once it is. */
  kill(): Promise<void>;
}

/**
 * Runs `body` (module statements; `store` is a journaling FsSessionStore on `home`, `home` its path) and resolves
 * once it writes "ready" on its stdout. The body should then hold on (setInterval), its logs and journal open.
 */
export async function journalingChild(home: string, body: string): Promise<JournalingChild> {
  const module = pathToFileURL(
    path.join(import.meta.dirname, "../../../../dist/src/store/fs/session-store.js"),
  ).href;
  const script = `const { FsSessionStore } = await import(${JSON.stringify(module)});
    const home = ${JSON.stringify(home)};
    const store = new FsSessionStore(home, undefined, undefined, { journal: true });
    ${body}`;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(proc, "exit");
  let out = "";
  proc.stdout.setEncoding("utf8");
  proc.stdout.on("data", (chunk: string) => {
    out += chunk;
  });
  const kill = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    await exited;
  };
  try {
    await expect.poll(() => out, { timeout: 60_000 }).toContain("ready");
  } catch (err) {
    await kill();
    throw err;
  }
  return { out: () => out, kill };
}
