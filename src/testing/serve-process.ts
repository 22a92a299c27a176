// `brain serve` as a real process on a given $BRAIN_HOME and port, for tests that kill it (kill -9) and start it
// again on the same port: what a client sees when its daemon goes away and comes back.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const bin = join(import.meta.dirname, "../../bin/brain.js");

/** `brain serve` on `port` and `home`; resolves once it listens. */
export async function serve(home: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, "serve", "--port", String(port)], {
    env: { ...process.env, BRAIN_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  await new Promise<void>((listening, failed) => {
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("stop with Ctrl-C")) listening();
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.once("exit", (code) => failed(new Error(`brain serve exited (${code}): ${out}`)));
  });
  return child;
}

/** Sends `signal` to `child` and resolves once it has exited (at once when it had). */
export async function killed(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = new Promise((done) => child.once("exit", done));
  child.kill(signal);
  await exit;
}
