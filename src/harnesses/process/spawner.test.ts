// The spawn host: runners it starts behave as runners Brain spawns itself (pipes, exit, minimal environment,
// failures named), without Brain forking; the host's own death or release loses no runner.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import type { Socket } from "node:net";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { alive, groupAlive, until } from "../../testing/processes.js";
import type { AttachmentSink } from "./runner-process.js";
import { RunnerProcess } from "./runner-process.js";
import { type RemoteChild, Spawner, spawnHostPath } from "./spawner.js";
import { spawnRunner } from "./started-runner.js";

const releases: (() => void)[] = [];
const children: RemoteChild[] = [];
/** Process groups a test left running (it failed before they ended), killed here. */
const groups: number[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const release of releases.splice(0)) release();
  for (const group of groups.splice(0)) if (groupAlive(group)) process.kill(-group, "SIGKILL");
});

function spawner(): Spawner {
  const s = new Spawner();
  releases.push(s.use());
  return s;
}

async function started(s: Spawner, command: string, args: string[] = []): Promise<RemoteChild> {
  const child = await s.spawn({ command, args });
  children.push(child);
  return child;
}

async function read(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += String(chunk);
  return text;
}

const closed = (child: RemoteChild) =>
  once(child, "close") as Promise<[number | null, NodeJS.Signals | null]>;

describe("Spawner", () => {
  it("starts a runner whose pipes are Brain's: what it is sent it answers, and stdin's end ends it", async () => {
    const child = await started(spawner(), "cat");
    expect(child.pid).toBeGreaterThan(0);
    const output = read(child.stdout);
    const exit = closed(child);
    child.stdin.end("hello through the host\n");
    // cat exits only at EOF on stdin: the host kept no copy of the pipe's write end.
    expect(await output).toBe("hello through the host\n");
    expect(await exit).toEqual([0, null]);
    expect(child.exitCode).toBe(0);
  });

  it("closes after its exit even when nobody reads its output, as a ChildProcess does", async () => {
    const child = await started(spawner(), process.execPath, ["-e", "process.stdout.write('x'.repeat(100))"]);
    expect(await closed(child)).toEqual([0, null]);
  });

  it("hands over what a runner writes the moment it starts, and an exit right after it: nothing read by the host", async () => {
    const s = spawner();
    // Lost now and then before the host stopped reading the pipes it sends; a few starts in a row show it.
    for (let i = 0; i < 20; i++) {
      const child = await started(s, "sh", ["-c", "echo out; echo err >&2; exit 7"]);
      const output = Promise.all([read(child.stdout), read(child.stderr)]);
      expect(await closed(child)).toEqual([7, null]);
      expect(await output).toEqual(["out\n", "err\n"]);
    }
  });

  it("gives the runner the minimal environment and its own process group", async () => {
    process.env.BRAIN_SPAWNER_TEST_SECRET = "must-not-leak";
    try {
      const child = await started(spawner(), process.execPath, [
        "-e",
        "console.log(JSON.stringify({ secret: process.env.BRAIN_SPAWNER_TEST_SECRET ?? null, group: require('node:child_process').execSync('ps -o pgid= -p ' + process.pid).toString().trim() }))",
      ]);
      const out = JSON.parse(await read(child.stdout)) as { secret: string | null; group: string };
      expect(out.secret).toBeNull();
      expect(Number(out.group)).toBe(child.pid); // detached: it leads its own group
    } finally {
      delete process.env.BRAIN_SPAWNER_TEST_SECRET;
    }
  });

  it("names what could not be started, and goes on starting others", async () => {
    const s = spawner();
    const missing = s.spawn({ command: "/nonexistent/brain-runner", args: [] });
    await expect(missing).rejects.toMatchObject({ code: "ENOENT" });
    await expect(missing).rejects.toThrow(/brain-runner/);
    const child = await started(s, "cat");
    child.stdin.end();
    expect(await closed(child)).toEqual([0, null]);
  });

  it("loses no runner when the host dies: it goes on talking, closes when its output ends, and a new host starts", async () => {
    const s = spawner();
    const child = await started(s, "cat");
    const host = s.hostPid!;
    process.kill(host, "SIGKILL");
    await until(() => !alive(host));
    const output = read(child.stdout);
    const exit = closed(child);
    child.stdin.end("still here\n");
    expect(await output).toBe("still here\n");
    expect(await exit).toEqual([null, null]); // its status went with the host
    const next = await started(s, "cat");
    expect(s.hostPid).not.toBe(host);
    next.stdin.end();
    expect(await closed(next)).toEqual([0, null]);
  });

  it("stops what it started, group by group, when Brain is killed: SIGTERM, then SIGKILL for what ignores it", async () => {
    // A Brain of its own (the built spawner), to be SIGKILLed: one runner that ends at SIGTERM, one that ignores
    // it; each has a child in its group, as `opencode serve` under a launcher has.
    const { brain, line } = await brainOfItsOwn(`
        const runners = await Promise.all([
          s.spawn({ command: "sh", args: ["-c", "sleep 1000 & exec sleep 1000"] }),
          s.spawn({ command: "sh", args: ["-c", "trap '' TERM; sleep 1000 & wait"] }),
        ]);
        console.log(JSON.stringify(runners.map((r) => r.pid)));`);
    const started = JSON.parse(String(line)) as number[];
    groups.push(...started);
    expect(started.every(groupAlive)).toBe(true);
    brain.kill("SIGKILL");
    await until(() => !started.some(groupAlive));
  });

  it("stops a group whose leader exited before Brain was killed", async () => {
    // A runner that has exited and left a child in its group, which its owner had not yet killed when Brain died:
    // the host still knows the group.
    const { brain, line } = await brainOfItsOwn(`
        const runner = await s.spawn({ command: "sh", args: ["-c", "sleep 1000 </dev/null >/dev/null 2>&1 &"] });
        runner.on("close", () => console.log(JSON.stringify(runner.pid)));
        runner.stdout.resume();
        runner.stderr.resume();
        setInterval(() => {}, 1000); // alive until killed`);
    const group = JSON.parse(String(line)) as number;
    groups.push(group);
    expect(groupAlive(group)).toBe(true);
    brain.kill("SIGKILL");
    await until(() => !groupAlive(group));
  });

  it("stops what it started when Brain dies before it acknowledged a runner's pipes", async () => {
    // Brain's side of the channel, raw: it asks for a runner and goes away without the acknowledgement Node sends
    // for each pipe handed over, as a Brain killed in the middle of a start does.
    const host = spawn(process.execPath, [spawnHostPath()], {
      env: { NODE_CHANNEL_FD: "3", NODE_CHANNEL_SERIALIZATION_MODE: "json" },
      stdio: ["ignore", "ignore", "inherit", "pipe"],
    });
    releases.push(() => host.kill("SIGKILL"));
    const channel = host.stdio[3] as Socket;
    channel.write(
      `${JSON.stringify({ id: 1, command: "sh", args: ["-c", "sleep 1000 & exec cat"], env: {}, detached: true })}\n`,
    );
    let heard = "";
    await until(() => {
      heard += String(channel.read() ?? "");
      return /"pid":(\d+)/.test(heard);
    });
    const group = Number(/"pid":(\d+)/.exec(heard)![1]);
    groups.push(group);
    expect(groupAlive(group)).toBe(true);
    channel.destroy();
    await until(() => !groupAlive(group));
    await until(() => host.exitCode !== null);
  });

  it("fails a start with what became of the host when the host cannot run", async () => {
    const s = new Spawner("/nonexistent/spawn-host.js");
    releases.push(s.use());
    await expect(s.spawn({ command: "cat", args: [] })).rejects.toThrow(
      "Brain's spawn host (/nonexistent/spawn-host.js) exited with code 1 before the runner was started",
    );
  });

  it("ends the host once its last user releases it, not before", async () => {
    const s = new Spawner();
    const [first, second] = [s.use(), s.use()];
    const child = await s.spawn({ command: "cat", args: [] });
    children.push(child);
    const host = s.hostPid!;
    first();
    first(); // a second call counts nothing
    expect(alive(host)).toBe(true);
    second();
    await until(() => !alive(host));
    expect(alive(child.pid!)).toBe(true); // runners are their owners' to stop
  });

  it("leaves Brain's pages writable: unlike its own spawn, a start through the host costs no fault per page", async () => {
    const pages = 16_384;
    const memory = Buffer.alloc(pages * 4096, 1);
    const faultsTouching = () => {
      const before = process.resourceUsage().minorPageFault;
      for (let i = 0; i < memory.length; i += 4096) memory[i]! ^= 1;
      return process.resourceUsage().minorPageFault - before;
    };
    const s = spawner();
    (await started(s, "cat")).stdin.end(); // the host's own fork, once
    faultsTouching();

    const own = spawnRunner({ command: "cat", args: [] });
    own.stdin.end();
    const afterOwn = faultsTouching();
    (await started(s, "cat")).stdin.end();
    const afterHost = faultsTouching();

    expect(afterOwn).toBeGreaterThan(pages / 2); // fork(2) write-protected every page
    expect(afterHost).toBeLessThan(pages / 10);
  });
});

describe("RunnerProcess on a spawn host", () => {
  it("holds frames sent before the runner is started, and fails every attachment when it cannot start", async () => {
    const spec = { name: "late", command: "cat", args: [] };
    let open!: (child: RemoteChild) => void;
    const runner = new RunnerProcess(spec, new Promise<RemoteChild>((resolve) => (open = resolve)));
    runner.send({ attachment: "a", id: "1", method: "detach", params: null });
    const child = await spawner().spawn(spec);
    children.push(child);
    const echoed = new Promise<string>((resolve) =>
      child.stdout.once("data", (d: Buffer) => resolve(String(d))),
    );
    open(child);
    expect(JSON.parse(await echoed)).toMatchObject({ attachment: "a", id: "1", method: "detach" });
    await runner.destroy();

    const fatal: string[] = [];
    const sink = { onFatal: (m: string) => fatal.push(m) } as unknown as AttachmentSink;
    const failed = new RunnerProcess(spec, Promise.reject(new Error("spawn cat EAGAIN")));
    failed.attach("a", sink);
    await failed.exited;
    expect(failed.alive).toBe(false);
    expect(fatal).toEqual(['could not start "cat": spawn cat EAGAIN']);
  });
});

/**
 * A Brain of its own (the built spawner, its `s` in use), to be SIGKILLed: runs `body`, and resolves with the
 * process and the first line it prints.
 */
async function brainOfItsOwn(body: string): Promise<{ brain: ChildProcess; line: string }> {
  const spawnerJs = join(dirname(spawnHostPath()), "spawner.js");
  const script = `import { Spawner } from ${JSON.stringify(spawnerJs)};
        const s = new Spawner();
        s.use();${body}`;
  const brain = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(brain.stdout!, "data")) as [Buffer];
  return { brain, line: String(line) };
}
