// A real stdio host on the built TypeScript nui SDK (dist/sdk/ts/nui), in a child process as Brain starts one: the
// agent's source is written to a scratch file, JSON-RPC goes in on stdin, and every stdout line must parse.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../src/testing/brain.js";
import { root } from "../../src/testing/nui.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read JSON-RPC lines field by field
export type Line = Record<string, any>;

export interface NuiChild {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line, parsed; a line that is not JSON is kept as {unparsed: line}. */
  lines: Line[];
  stderr: () => string;
  /** Sends harness.run and resolves with the run's events once its reply came, or rejects if the host exited. */
  run(id: number, message: string): Promise<Line[]>;
  /** Sends harness.shutdown and resolves with the exit code. */
  shutdown(): Promise<number | null>;
  exited: Promise<number | null>;
  dispose(): void;
}

export const sdkEntry = join(root, "dist/sdk/ts/nui/index.js");

/** `source` is an ES module whose `NuiAgent` import is prepended; it must call serveStdio(). */
export function startNuiChild(source: string): NuiChild {
  const dir = tempDir("brain-nui-child-");
  const file = join(dir, "agent.mjs");
  writeFileSync(file, `import { NuiAgent } from ${JSON.stringify(sdkEntry)};\n${source}`);
  const child = spawn(process.execPath, [file], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: Line[] = [];
  let stderr = "";
  let pending = "";
  const waiters: (() => void)[] = [];
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk;
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        lines.push(JSON.parse(line));
      } catch {
        lines.push({ unparsed: line });
      }
    }
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
    for (const wake of waiters.splice(0)) wake();
  });
  const reply = (id: number) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (lines.some((line) => line.id === id)) return resolve();
        if (gone) return reject(new Error(`the host exited before replying to ${id}; stderr: ${stderr}`));
        waiters.push(check);
      };
      check();
    });
  const send = (message: Line) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  return {
    child,
    lines,
    stderr: () => stderr,
    async run(id, message) {
      send({ id, method: "harness.run", params: { message, runId: `r${id}` } });
      await reply(id);
      return lines
        .filter((l) => l.method === "harness.event" && l.params?.runId === `r${id}`)
        .map((l) => l.params);
    },
    async shutdown() {
      send({ id: 999, method: "harness.shutdown" });
      await reply(999);
      return exited;
    },
    exited,
    dispose() {
      if (!gone) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
