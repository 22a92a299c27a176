// The groups Brain started, written down so that a Brain killed together with its spawn host (a kill of its whole
// process group, the OOM killer) leaves nothing running for good: the next start on the same home stops them.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processStart } from "../../core/process-identity.js";
import { tempDir } from "../../testing/brain.js";
import { root } from "../../testing/brain-cli.js";
import { alive, groupAlive, until } from "../../testing/processes.js";
import { SpawnRecords, spawnRecordsDir, stopOrphanedGroups } from "./spawn-records.js";
import { spawnHostPath } from "./spawner.js";

const dirs: string[] = [];
const groups: number[] = [];
afterEach(() => {
  for (const group of groups.splice(0)) if (groupAlive(group)) process.kill(-group, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function home(): string {
  const dir = tempDir("brain-spawned-");
  dirs.push(dir);
  return dir;
}

/** A process group of its own running `sleep`, as a runner's is. */
async function sleeper(): Promise<ChildProcess> {
  const child = spawn("sh", ["-c", "sleep 1000 & exec sleep 1000"], { detached: true, stdio: "ignore" });
  await once(child, "spawn");
  groups.push(child.pid!);
  return child;
}

/** The pid of a process that has exited: an owner that is gone. */
async function deadPid(): Promise<number> {
  const child = spawn("true");
  await once(child, "exit");
  return child.pid!;
}

function record(dir: string, body: unknown, name?: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name ?? `${(body as { pgid: number }).pgid}.json`);
  writeFileSync(file, JSON.stringify(body));
  return file;
}

describe("spawn records", () => {
  it("a Brain killed with its spawn host leaves its runners' groups running, and the next start stops them", async () => {
    const dir = spawnRecordsDir(home());
    // A Brain of its own leading its own process group, its spawn host in it: one kill of the group takes both.
    const spawnerJs = join(dirname(spawnHostPath()), "spawner.js");
    const recordsJs = join(dirname(spawnHostPath()), "spawn-records.js");
    const script = `import { Spawner } from ${JSON.stringify(spawnerJs)};
      import { SpawnRecords } from ${JSON.stringify(recordsJs)};
      const s = new Spawner(undefined, new SpawnRecords(${JSON.stringify(dir)}));
      s.use();
      const runners = await Promise.all([
        s.spawn({ command: "sh", args: ["-c", "sleep 1000 & exec sleep 1000"] }),
        s.spawn({ command: "sh", args: ["-c", "trap '' TERM; sleep 1000 & wait"] }),
      ]);
      console.log(JSON.stringify(runners.map((r) => r.pid)));`;
    const brain = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    const [line] = (await once(brain.stdout!, "data")) as [Buffer];
    const started = JSON.parse(String(line)) as number[];
    groups.push(...started);
    expect(readdirSync(dir).sort()).toEqual(started.map((pid) => `${pid}.json`).sort());

    process.kill(-brain.pid!, "SIGKILL");
    await until(() => !alive(brain.pid!));
    // Nothing that knew them is left, and they run on: the defect the records are for.
    expect(started.every(groupAlive)).toBe(true);

    const sweep = stopOrphanedGroups(dir, 300);
    expect(sweep.stopped).toBe(2);
    await sweep.done;
    await until(() => !started.some(groupAlive));
    expect(readdirSync(dir)).toEqual([]);
  });

  it("leaves a live owner's groups alone, drops records of groups that are gone, and never signals a reused pid", async () => {
    const dir = spawnRecordsDir(home());
    const running = await sleeper();
    const owner = { pid: process.pid, start: processStart(process.pid) };
    const mine = record(dir, { pgid: running.pid, start: processStart(running.pid!), owner });
    const gone = record(dir, { pgid: await deadPid(), owner: { pid: await deadPid() } });
    // A pid reused after its group was gone: a live process at the leader's pid that is not the leader.
    const reused = await sleeper();
    const other = record(dir, { pgid: reused.pid, start: "another-boot:1", owner: { pid: await deadPid() } });

    const sweep = stopOrphanedGroups(dir, 50);
    await sweep.done;
    expect(sweep.stopped).toBe(0);
    expect(groupAlive(running.pid!)).toBe(true);
    expect(existsSync(mine)).toBe(true);
    expect(existsSync(gone)).toBe(false);
    expect(groupAlive(reused.pid!)).toBe(true);
    expect(existsSync(other)).toBe(false);
  });

  it("removes a record it cannot read, and names it, without failing the start", async () => {
    const dir = spawnRecordsDir(home());
    record(dir, "not a record", "12.json");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "13.json"), "{ torn");
    // Just written, it may be one another Brain is writing still: left for a later start.
    expect(stopOrphanedGroups(dir).malformed).toEqual([]);
    const old = new Date(Date.now() - 60_000);
    for (const name of ["12.json", "13.json"]) utimesSync(join(dir, name), old, old);
    const sweep = stopOrphanedGroups(dir);
    expect(sweep.malformed.sort()).toEqual(["12.json", "13.json"]);
    expect(readdirSync(dir)).toEqual([]);
    // No records directory at all: nothing to do.
    expect(stopOrphanedGroups(join(dir, "absent")).stopped).toBe(0);
  });

  // A home that is not a directory (or has gone read-only, or full): the record was not written, then removing it
  // threw from the runner's exit handler and ended `brain run` with a stack trace instead of its error.
  it("a record that cannot be removed is left, and `brain run` ends with its own error, not a crash", () => {
    const file = join(home(), "not-a-dir");
    writeFileSync(file, "");
    expect(() => new SpawnRecords(spawnRecordsDir(file)).remove(process.pid)).not.toThrow();
    const r = spawnSync(process.execPath, [join(root, "bin/brain.js"), "run", "--harness", "echo", "hi"], {
      env: { ...process.env, BRAIN_HOME: file },
      encoding: "utf8",
      input: "",
    });
    // Refused before any runner starts (src/cli/brain-home.ts), naming the variable and the fix.
    expect(r.stderr).toMatch(/^brain: \$BRAIN_HOME \(.*not-a-dir\) is not a directory/);
    expect(r.stderr).not.toContain("    at ");
    expect(r.status).toBe(2);
  });
});
