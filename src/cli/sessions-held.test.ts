// `brain sessions ls` on a session whose `brain run` was killed (SIGKILL, the OOM killer) mid-turn: its record
// still says "open", as nothing was left to close it, but no process holds it. The table says so ("idle"), from
// the log's lock alone; a session a live process holds stays "open", and --json prints the record as stored.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { signalGroup, spawnRecordsDir } from "../harnesses/process/spawn-records.js";
import { root, useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("sessions-held");
const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");

/** `brain run` of a slow turn, resolved once it streams (its session open, its log locked by it). */
async function streamingRun(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(root, "bin/brain.js"), "run", words], {
    cwd: cli.work,
    env: { ...process.env, BRAIN_HOME: cli.home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise((resolve, reject) => {
    child.stdout!.once("data", resolve);
    child.once("exit", (code) => reject(new Error(`brain run exited ${code} before it streamed`)));
  });
  return child;
}

const sessionIds = () => readdirSync(join(cli.home, "sessions")).filter((name) => !name.startsWith("."));
const row = (id: string) =>
  cli
    .run(["sessions", "ls"])
    .out.split("\n")
    .find((line) => line.startsWith(id));

// The runners the killed runs started (their own process groups) are stopped, not left to the next test file.
afterAll(() => {
  const dir = spawnRecordsDir(cli.home);
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const { pgid } = JSON.parse(readFileSync(join(dir, name), "utf8")) as { pgid: number };
    signalGroup(pgid, "SIGKILL");
  }
});

it("lists a session whose `brain run` was killed as idle, one a live run holds as open", async () => {
  writeFileSync(
    join(cli.work, "brain.config.json"),
    JSON.stringify({ defaults: { options: { delay_ms: 50 } } }),
  );
  const killed = await streamingRun();
  const [id] = sessionIds();
  killed.kill("SIGKILL");
  await new Promise((resolve) => killed.once("exit", resolve));

  const held = await streamingRun();
  try {
    const heldId = sessionIds().find((s) => s !== id)!;
    expect(row(heldId)).toMatch(new RegExp(`^${heldId}\\s+echo\\s+open `));
    expect(row(id!)).toMatch(new RegExp(`^${id}\\s+echo\\s+idle `));
    // The record itself is not changed: what --json prints (and the daemon serves) is the stored status.
    const listed = cli
      .run(["sessions", "ls", "--json"])
      .out.split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: string; status: string });
    expect(listed.find((r) => r.id === id)?.status).toBe("open");
  } finally {
    held.kill("SIGKILL");
    await new Promise((resolve) => held.once("exit", resolve));
  }
});
