// `brain … | head -1`: the reader of stdout goes away while the command still writes. The command says so and
// exits 141 (as a shell shows a process SIGPIPE ended), never a stack trace; a local turn is interrupted and
// logged as such, a followed session goes on on the daemon.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { spawnRecordsDir } from "../harnesses/process/spawn-records.js";
import { readEventsFile } from "../store/fs/index.js";
import { root, sessionIdFrom, useBrainCli } from "../testing/brain-cli.js";
import { collect, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const cli = useBrainCli("closed-stdout");
const t = useTestDaemon();
const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");

/** `brain ARGS` whose stdout's reader goes away: at once, or after the first output. */
async function closingStdout(args: string[], after: "start" | "first output", env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [join(root, "bin/brain.js"), ...args], {
    cwd: cli.work,
    env: { ...process.env, BRAIN_HOME: cli.home, BRAIN_URL: "", BRAIN_TOKEN: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (c: Buffer) => {
    err += c;
  });
  if (after === "start") child.stdout.destroy();
  else child.stdout.once("data", () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, err };
}

const CLOSED = "brain: stdout was closed by its reader (as `| head` does): the output stops there\n";

it("brain run: the turn is interrupted and logged, the session closed, its runner's record gone", async () => {
  writeFileSync(
    join(cli.work, "brain.config.json"),
    JSON.stringify({ defaults: { options: { delay_ms: 50 } } }),
  );
  const { code, err } = await closingStdout(["run", words], "first output");
  expect(err).not.toContain("Unhandled");
  expect(err).toContain(CLOSED);
  expect(code).toBe(141);
  const id = sessionIdFrom(err);
  const log = await readEventsFile(join(cli.home, "sessions", id, "events.jsonl"));
  expect(log.filter((e) => e.type === "turn.settled").map((e) => e.data)).toEqual([
    { status: "interrupted" },
  ]);
  expect(log.at(-1)?.type).toBe("session.closed");
  const records = spawnRecordsDir(cli.home);
  expect(existsSync(records) ? readdirSync(records) : []).toEqual([]);

  // What only reads says so too.
  const events = await closingStdout(["sessions", "events", id], "start");
  expect(events.err).not.toContain("Unhandled");
  expect(events).toEqual({ code: 141, err: CLOSED });
});

it("brain attach: stops following, saying how to follow again; the turn goes on on the daemon", async () => {
  const client = t.client();
  const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 20 } } });
  const { turn } = await client.prompt(id, words);
  const args = ["attach", id, "--server", t.url, "--token", t.tokens.admin, "--until-settled"];
  const { code, err } = await closingStdout(args, "first output");
  expect(err).not.toContain("Unhandled");
  expect(err).toContain(`[detached; the session goes on: brain attach ${id}]`);
  expect(err).toContain(CLOSED);
  expect(code).toBe(141);
  const events = await collect(client, id, settled(turn));
  expect(events.at(-1)).toMatchObject({ type: "turn.settled", data: { status: "completed" } });
});
