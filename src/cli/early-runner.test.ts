// `brain run` spawns its runner before the config is validated: the session's harness takes that very child when
// it would spawn the same launch, a bad config still fails as before and leaves no process behind, and the early
// step starts nothing for the runs it cannot be sure of.
import { type StdioOptions, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { minimalEnvironment } from "../harnesses/process/environment.js";
import { ProcessFactory } from "../harnesses/process/factory.js";
import { echoRunnerPath } from "../harnesses/process/runner-paths.js";
import { spawnRecordsDir, stopOrphanedGroups } from "../harnesses/process/spawn-records.js";
import type { StartedRunner } from "../harnesses/process/started-runner.js";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../testing/brain.js";
import { root, useBrainCli } from "../testing/brain-cli.js";
import { inlineRunnerArgs } from "../testing/inline-runner.js";
import { alive, groupAlive, until } from "../testing/processes.js";
import { fixtureStdio } from "../tools/mcp/testing/servers.js";
import { startEarlyRunner } from "./early-runner.js";

/** Logs `start <pid> <its environment's names>` when it boots; answers a prompt with its pid. */
const RUNNER = inlineRunnerArgs(
  `fs.appendFileSync(process.env.PID_LOG, "start " + process.pid + " " + Object.keys(process.env).sort().join(",") + "\\n");`,
  `
  if (f.method === "prompt") send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "pid " + process.pid } });
  reply(f.method === "checkpoint" ? [] : {});`,
);

/** The runners that booted: pid and environment names. */
function starts(pidLog: string): { pid: number; env: string[] }[] {
  if (!existsSync(pidLog)) return [];
  return readFileSync(pidLog, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("start "))
    .map((line) => {
      const [, pid, env] = line.split(" ");
      return { pid: Number(pid), env: env!.split(",") };
    });
}

const config = (dir: string, body: unknown) =>
  writeFileSync(join(dir, "brain.config.json"), JSON.stringify(body));

let started: StartedRunner | undefined;
let t: TestBrain | undefined;
/** Runners' groups a test started through a killed Brain: killed here even when the test timed out. */
const groups: number[] = [];
afterEach(async () => {
  await started?.discard();
  await t?.cleanup();
  started = undefined;
  t = undefined;
  for (const pgid of groups.splice(0)) if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
});

/**
 * `brain run ARGS` on a runner that starts a process in its group, as a tool would, and never answers its open;
 * `group()` waits for the runner's pid and returns its group, which the test's end kills whatever happened.
 */
function runOnHangingRunner(
  cli: { work: string; home: string },
  args: string[],
  stdio: StdioOptions = "ignore",
  defaults: Record<string, unknown> = {},
) {
  const pidFile = join(tempDir(), "runner-pid");
  const line = `echo $$ > ${pidFile}; sleep 300 & exec cat >/dev/null`;
  config(cli.work, {
    defaults: { harness: "sh", ...defaults },
    harnesses: { sh: { command: ["/bin/sh", "-c", line] } },
  });
  const brain = spawn(process.execPath, [join(root, "bin/brain.js"), "run", ...args], {
    cwd: cli.work,
    env: { ...process.env, BRAIN_HOME: cli.home },
    stdio,
  });
  const group = async () => {
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
    const pgid = Number(readFileSync(pidFile, "utf8"));
    groups.push(pgid);
    return pgid;
  };
  return { brain, group };
}

/** The processes whose command line holds `marker`. */
function running(marker: string): string[] {
  const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return ps.stdout.split("\n").filter((line) => line.includes(marker));
}

describe("the early runner of brain run", () => {
  it("is not started when the run may not create a new session on a known runner", () => {
    const dir = tempDir();
    for (const args of [
      ["hello", "--server", "http://127.0.0.1:1"],
      ["hello", "--session", "s1"],
      ["hello", "--agent", "a"],
      ["hello", "--harness", "api"],
      ["hello", "--no-such-flag"],
      [],
      ["hello", "--config", "missing.json"],
    ])
      expect(startEarlyRunner(args, dir), args.join(" ")).toBeUndefined();
    writeFileSync(join(dir, "brain.config.json"), "{ not json");
    expect(startEarlyRunner(["hello"], dir)).toBeUndefined();
    config(dir, { harnesses: { echo: { command: "node runner.js", shared: true } } });
    expect(startEarlyRunner(["hello"], dir)).toBeUndefined();
    config(dir, { harnesses: { echo: { command: ["/no/such/program"] } } });
    expect(startEarlyRunner(["hello"], dir)).toBeUndefined();
  });

  it("starts the default echo runner, or the config's entry with its directory and environment", () => {
    const dir = tempDir();
    started = startEarlyRunner(["hello"], dir);
    expect(started?.launch).toEqual({ command: process.execPath, args: [echoRunnerPath()] });
    void started?.discard();
    config(dir, {
      defaults: { harness: "mine" },
      harnesses: { mine: { command: [process.execPath, "-e", "0"], env: { A: "1" } } },
    });
    started = startEarlyRunner(["hello"], dir);
    expect(started?.launch).toEqual({
      command: process.execPath,
      args: ["-e", "0"],
      cwd: dir,
      env: { A: "1" },
    });
  });

  it("is taken by a factory only when it would spawn the same launch, and its session runs on it", async () => {
    const pidLog = join(tempDir(), "pids");
    const spec = {
      name: "warm",
      command: process.execPath,
      args: RUNNER,
      env: { PID_LOG: pidLog },
      spares: 0,
    };
    const other = startEarlyRunner(["hello"], tempDir())!; // the echo runner
    const factory = new ProcessFactory(spec);
    try {
      expect(factory.prestart(other)).toBe(false);
      await until(() => factory.sparePids().length === 1); // started by the spawn host: its pid comes back
      await other.discard();
      await factory.close();

      const dir = tempDir();
      config(dir, {
        defaults: { harness: "warm" },
        harnesses: { warm: { command: [process.execPath, ...RUNNER], env: { PID_LOG: pidLog } } },
      });
      started = startEarlyRunner(["hello"], dir)!;
      const earlyPid = started.pid;
      const mine = new ProcessFactory({ ...spec, cwd: dir });
      expect(mine.prestart(started)).toBe(true);
      const [pid] = mine.sparePids();
      expect(pid).toBe(earlyPid);
      t = makeBrain({ factories: [mine] });
      const session = await t.brain.create({ harness: "warm" });
      const turn = await session.prompt("hi");
      expect((await turn.settled).status).toBe("completed");
      expect(textOf(await events(session), turn.turn)).toBe(`pid ${pid}`);
    } finally {
      await factory.close();
    }
  });
});

describe("brain run with an early runner", () => {
  const cli = useBrainCli("early-runner");

  it("runs the session on the runner it started first, with the minimal environment", () => {
    const pidLog = join(tempDir(), "pids");
    config(cli.work, {
      defaults: { harness: "logged" },
      harnesses: { logged: { command: [process.execPath, ...RUNNER], env: { PID_LOG: pidLog } } },
    });
    const run = cli.run(["run", "hi"]);
    expect(run.code, run.err).toBe(0);
    const booted = starts(pidLog);
    // One runner only: the one started before the config was checked is the one that answered.
    expect(booted).toHaveLength(1);
    expect(run.out).toContain(`pid ${booted[0]!.pid}`);
    const expected = Object.keys(minimalEnvironment(process.env, { PID_LOG: pidLog }));
    expect(booted[0]!.env).toEqual(expect.arrayContaining(expected));
  });

  it("reports an invalid harness as before and leaves no runner behind", async () => {
    const pidLog = join(tempDir(), "pids");
    const marker = `early-runner-test-${randomUUID()}`;
    const file = join(cli.work, "brain.config.json");
    config(cli.work, { defaults: { harness: "logged" }, harnesses: { logged: { command: 42 } } });
    const bad = cli.run(["run", "hi"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(`brain: ${file}: field "harnesses.logged.command": expected string or array\n`);
    // A launch the early step accepts, in a config the schema refuses: started, then killed before the exit.
    config(cli.work, {
      defaults: { harness: "logged" },
      harnesses: {
        logged: { command: [process.execPath, ...RUNNER, marker], env: { PID_LOG: pidLog }, colour: "red" },
      },
    });
    const refused = cli.run(["run", "hi"]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      `brain: ${file}: unknown field "harnesses.logged.colour": the fields here are command`,
    );
    expect(running(marker)).toEqual([]);
    for (const { pid } of starts(pidLog)) expect(alive(pid), `runner ${pid}`).toBe(false);
  });

  it("leaves what its runner started to the next Brain to stop when Brain is killed", async () => {
    // Brain is killed mid-open.
    const { brain, group } = runOnHangingRunner(cli, ["hi"]);
    try {
      const pgid = await group();
      // Killed once its runner is recorded: Brain writes the record right after the spawn returns, but on a loaded
      // machine the runner may have written its pid file while Brain had not yet run again to write it.
      await until(() => existsSync(join(spawnRecordsDir(cli.home), `${pgid}.json`)));
      const gone = new Promise((resolve) => brain.once("exit", resolve));
      brain.kill("SIGKILL");
      await gone;
      expect(groupAlive(pgid)).toBe(true); // nothing of Brain's is left to stop it
      // The next Brain on this home, at its start.
      const sweep = stopOrphanedGroups(spawnRecordsDir(cli.home), 100);
      expect(sweep.stopped).toBe(1);
      await sweep.done;
      await until(() => !groupAlive(pgid));
    } finally {
      brain.kill("SIGKILL");
    }
  });

  it("takes its runner's group with it on a Ctrl-C before brain run has its own", async () => {
    const { brain, group } = runOnHangingRunner(cli, ["hi"]);
    try {
      const pgid = await group();
      const exit = new Promise<[number | null, string | null]>((resolve) =>
        brain.once("exit", (code, signal) => resolve([code, signal])),
      );
      brain.kill("SIGINT");
      expect(await exit).toEqual([130, null]);
      await until(() => !groupAlive(pgid)); // gone with Brain, not left to the next one's start
    } finally {
      brain.kill("SIGKILL");
    }
  });

  it("takes its runner's and MCP servers' groups with it when a second Ctrl-C leaves at once", async () => {
    // An MCP stdio server that leaves a process of its own running, as a server's helper would.
    const mcpPidFile = join(tempDir(), "mcp-pid");
    const { command, args } = fixtureStdio();
    const mcp = `echo $$ > ${mcpPidFile}; sleep 300 & exec "$0" "$@"`;
    const { brain, group } = runOnHangingRunner(cli, ["--json", "hi"], ["ignore", "pipe", "pipe"], {
      mcp_servers: { helper: { command: "/bin/sh", args: ["-c", mcp, command, ...(args ?? [])] } },
    });
    let out = "";
    let err = "";
    brain.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    brain.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString("utf8");
    });
    try {
      // turn.started: the run's Ctrl-C handler is in place.
      await until(() => out.includes('"turn.started"'));
      const pgid = await group();
      await until(() => existsSync(mcpPidFile) && readFileSync(mcpPidFile, "utf8").endsWith("\n"));
      const mcpGroup = Number(readFileSync(mcpPidFile, "utf8"));
      groups.push(mcpGroup);
      const code = new Promise((resolve) => brain.once("exit", resolve));
      brain.kill("SIGINT");
      // The first one only interrupts; a second sent before it was handled could merge with it.
      await until(() => err.includes("[interrupting"));
      brain.kill("SIGINT");
      expect(await code).toBe(130);
      await until(() => !groupAlive(pgid));
      await until(() => !groupAlive(mcpGroup));
    } finally {
      brain.kill("SIGKILL");
    }
  });
});
