// `brain run` stopped by SIGTERM (`timeout`, a CI runner, a service manager) mid-turn: the turn is interrupted and
// logged as such, the session closed, its runner gone with its record, as on a Ctrl-C.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { spawnRecordsDir } from "../harnesses/process/spawn-records.js";
import { readEventsFile } from "../store/fs/index.js";
import { root, sessionIdFrom, useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("sigterm");

it("interrupts the turn, logs how it ended and closes the session", async () => {
  writeFileSync(
    join(cli.work, "brain.config.json"),
    JSON.stringify({ defaults: { options: { delay_ms: 50 } } }),
  );
  const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
  const child = spawn(process.execPath, [join(root, "bin/brain.js"), "run", words], {
    cwd: cli.work,
    env: { ...process.env, BRAIN_HOME: cli.home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (c: Buffer) => {
    err += c;
  });
  // Streaming: the turn runs, and the run's own handlers are set.
  child.stdout.once("data", () => child.kill("SIGTERM"));
  const exit = await new Promise((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  expect(exit, err).toEqual({ code: 143, signal: null });
  const log = await readEventsFile(join(cli.home, "sessions", sessionIdFrom(err), "events.jsonl"));
  expect(log.filter((e) => e.type === "turn.settled").map((e) => e.data)).toEqual([
    { status: "interrupted" },
  ]);
  expect(log.at(-1)?.type).toBe("session.closed");
  const records = spawnRecordsDir(cli.home);
  expect(existsSync(records) ? readdirSync(records) : []).toEqual([]);
});
