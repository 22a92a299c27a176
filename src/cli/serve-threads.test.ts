// `brain serve` sizes libuv's thread pool for many sessions' durable commits (bin/io-threads.js), and keeps an
// operator's own UV_THREADPOOL_SIZE. Counted from outside: the daemon's threads in /proc once it has done file
// work (creating a session), which is when libuv starts its pool.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BrainClient } from "../client/client.js";

const bin = join(import.meta.dirname, "../../bin/brain.js");
const started: { child: ChildProcess; home: string }[] = [];

afterEach(() => {
  for (const { child, home } of started.splice(0)) {
    child.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  }
});

async function serve(env: NodeJS.ProcessEnv): Promise<{ pid: number; client: BrainClient }> {
  const home = mkdtempSync(join(tmpdir(), "brain-serve-threads-"));
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--no-auth"], {
    env: { ...process.env, BRAIN_HOME: home, UV_THREADPOOL_SIZE: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push({ child, home });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /brain daemon on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`brain serve exited (${code}): ${err}`)));
  });
  return { pid: child.pid!, client: new BrainClient({ url }) };
}

const threadsOf = (pid: number) => readdirSync(`/proc/${pid}/task`).length;

describe.skipIf(!existsSync("/proc/self/task"))("brain serve's I/O threads", () => {
  it("starts 64 I/O threads for the sessions' commits", async () => {
    const daemon = await serve({});
    const { id } = await daemon.client.create({ harness: "echo" });
    await daemon.client.prompt(id, "hello");
    expect(threadsOf(daemon.pid)).toBeGreaterThan(64);
  });

  it("keeps the operator's UV_THREADPOOL_SIZE", async () => {
    const daemon = await serve({ UV_THREADPOOL_SIZE: "4" });
    const { id } = await daemon.client.create({ harness: "echo" });
    await daemon.client.prompt(id, "hello");
    expect(threadsOf(daemon.pid)).toBeLessThan(32);
  });
});
