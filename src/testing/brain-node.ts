// A real `brain serve --nats` process for cluster tests and benchmarks: its own $BRAIN_HOME, a free loopback
// port, no auth, the echo runner. Killed with SIGKILL to test failover, stopped with SIGTERM otherwise.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BrainClient } from "../client/client.js";

const HERE = dirname(fileURLToPath(import.meta.url));
/** bin/brain.js, from src/testing (vitest) or dist/src/testing (benchmarks). */
const BIN = [join(HERE, "..", "..", "bin", "brain.js"), join(HERE, "..", "..", "..", "bin", "brain.js")].find(
  (p) => existsSync(p),
);

export interface BrainNode {
  name: string;
  url: string;
  home: string;
  client: BrainClient;
  /** SIGKILL: the node dies at once, mid-turn if one is running. */
  kill(): Promise<void>;
  /** SIGSTOP: the node freezes (its lease stops being renewed) until resume(). */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGTERM, then removes its home. */
  stop(): Promise<void>;
}

/** `bin` is bin/brain.js of the built tree (tests run against dist). */
export async function startBrainNode(
  name: string,
  servers: string[],
  options: { leaseTtlMs?: number; bin?: string } = {},
): Promise<BrainNode> {
  const home = mkdtempSync(join(tmpdir(), `brain-${name}-`));
  const env: NodeJS.ProcessEnv = { ...process.env, BRAIN_HOME: home };
  if (options.leaseTtlMs) env.BRAIN_LEASE_TTL_MS = String(options.leaseTtlMs);
  const bin = options.bin ?? BIN ?? join(process.cwd(), "bin", "brain.js");
  const child = spawn(
    process.execPath,
    [bin, "serve", "--port", "0", "--no-auth", "--nats", servers.join(","), "--node", name],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const onData = (d: Buffer) => {
      out += d.toString();
      const match = /brain daemon on (http:\/\/\S+)/.exec(out);
      if (match) {
        child.stdout!.off("data", onData);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`brain node ${name} exited (${code}) before listening: ${stderr}`)),
    );
  });
  child.stdout!.resume();
  const exited = (p: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once("exit", () => resolve());
    });
  return {
    name,
    url,
    home,
    client: new BrainClient({ url }),
    async kill() {
      child.kill("SIGKILL");
      await exited(child);
    },
    pause() {
      child.kill("SIGSTOP");
    },
    resume() {
      child.kill("SIGCONT");
    },
    async stop() {
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited(child);
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
    },
  };
}
