// What one session, or a dead process, may not do to the others: a prompt too large to frame fails alone on a
// shared runner, and a runner's whole process group goes when the runner is killed or Brain itself is.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { echoFactory, events, makeBrain, type TestBrain, textOf } from "../../testing/brain.js";
import { alive, until } from "../../testing/processes.js";
import { RunnerProcess } from "./runner-process.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const root = join(import.meta.dirname, "../../..");

describe("frames too large to send", () => {
  it("fail the one turn that sent it; the shared runner and its other sessions go on", async () => {
    t = makeBrain({ factories: [echoFactory({ shared: true })] });
    const a = await t.brain.create({ harness: "echo" });
    const b = await t.brain.create({ harness: "echo" });
    const warm = await b.prompt("before");
    expect((await warm.settled).status).toBe("completed");

    const huge = await a.prompt("x".repeat(5 << 20));
    const outcome = await huge.settled;
    expect(outcome.status).toBe("failed");
    const settledEvent = (await events(a)).find((e) => e.type === "turn.settled" && e.turn === huge.turn);
    expect(JSON.stringify(settledEvent?.data)).toContain("4194304-byte limit");

    const after = await b.prompt("after");
    expect((await after.settled).status).toBe("completed");
    expect(textOf(await events(b), after.turn)).toContain("after");
    // The session that sent too much is not broken either.
    const again = await a.prompt("small");
    expect((await again.settled).status).toBe("completed");
  });
});

describe.skipIf(process.platform !== "linux")("process groups", () => {
  it("a killed runner takes what it started with it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-pgrp-"));
    try {
      const pidFile = join(dir, "child.pid");
      const runner = new RunnerProcess({
        name: "forker",
        command: "/bin/sh",
        args: ["-c", `sleep 300 & echo $! > ${pidFile}; wait`],
      });
      await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "");
      const child = Number(readFileSync(pidFile, "utf8"));
      expect(alive(child)).toBe(true);
      runner.kill();
      await until(() => !alive(child));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a runner exits once the brain process that started it is SIGKILLed", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-sigkill-"));
    try {
      const config = join(home, "brain.config.json");
      writeFileSync(config, JSON.stringify({ defaults: { options: { delay_ms: 200 } } }));
      const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
      const brain = spawn(
        process.execPath,
        [join(root, "bin/brain.js"), "run", "--config", config, "--json", words],
        { env: { ...process.env, BRAIN_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
      );
      // The first streamed word means the runner is up and mid-turn.
      await new Promise<void>((resolve) => {
        brain.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("assistant.delta")) resolve();
        });
      });
      const runners = childrenOf(brain.pid!);
      expect(runners.length).toBeGreaterThan(0);
      brain.kill("SIGKILL");
      for (const pid of runners) await until(() => !alive(pid));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {}
  }
  return found;
}
