// The two shortcuts on a docker session's start: the sweep of a crashed host's leftovers runs alongside
// `docker run` and must spare the container that run starts, and the container's init comes from /proc when
// /proc shows it unambiguously (else Docker is asked).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { fakeDocker, readCalls } from "../../testing/nui.js";
import { Container, sweepSession } from "./container.js";
import { containerInit } from "./container-pid.js";
import { ContainerRecords, containerRecordsDir } from "./container-records.js";
import { DockerFactory } from "./docker.js";
import { DockerCli, type DockerResult } from "./docker-cli.js";

const NEW = "a".repeat(64);
const STALE = `b${"0".repeat(63)}`;

/** A docker CLI that answers from a table and records what it was asked. */
function fakeCli(answers: Record<string, string>) {
  const calls: string[][] = [];
  const cli = {
    run: async (args: string[]): Promise<DockerResult> => {
      calls.push(args);
      return { stdout: answers[args[0]!] ?? "", stderr: "" };
    },
  } as unknown as DockerCli;
  return { cli, calls };
}

describe("the sweep beside docker run", () => {
  it("removes the session's leftovers but never the container the run started, listed by its short id", async () => {
    const { cli, calls } = fakeCli({ ps: `${NEW.slice(0, 12)}\n${STALE.slice(0, 12)}\n` });
    await sweepSession(cli, { id: "s-1" }, 1_000, Promise.resolve(NEW));
    expect(calls).toEqual([
      ["ps", "-aq", "--filter", "label=brain.session=s-1"],
      ["rm", "-f", "-v", STALE.slice(0, 12)],
    ]);
  });

  it("waits for the run before removing anything, and removes nothing when only the new container is listed", async () => {
    const { cli, calls } = fakeCli({ ps: `${NEW.slice(0, 12)}\n` });
    let started: (id: string | undefined) => void = () => {};
    const sweep = sweepSession(
      cli,
      { id: "s-1" },
      1_000,
      new Promise((resolve) => {
        started = resolve;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.map((c) => c[0])).toEqual(["ps"]);
    started(NEW);
    await sweep;
    expect(calls.map((c) => c[0])).toEqual(["ps"]);
  });

  it("a run that started nothing spares nothing", async () => {
    const { cli, calls } = fakeCli({ ps: `${STALE.slice(0, 12)}\n` });
    await sweepSession(cli, { id: "s-1" }, 1_000, Promise.resolve(undefined));
    expect(calls.at(-1)).toEqual(["rm", "-f", "-v", STALE.slice(0, 12)]);
  });
});

describe("a docker run that does not return", () => {
  let state = "";
  afterEach(() => {
    // An agent the fake started and nothing removed (what the test is about) is stopped, then its state goes.
    for (const file of readdirSync(join(state, "containers"))) {
      const { pid } = JSON.parse(readFileSync(join(state, "containers", file), "utf8"));
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    rmSync(state, { recursive: true, force: true });
  });

  it("removes the container the run started after the sweep beside it looked, and says the run timed out", async () => {
    state = tempDir("fake-docker-");
    // The fake's run starts the container once the sweep has listed the session's, says only Docker's
    // warning, and never returns.
    const env = { ...process.env, FAKE_DOCKER_STATE: state, FAKE_DOCKER_SLOW_RUN: "1" };
    const home = join(state, "home");
    const records = new ContainerRecords(home);
    const factory = new DockerFactory("docker", new DockerCli(fakeDocker, env), { runMs: 5_000 }, records);
    const options = {
      sessionId: "s-timeout",
      dir: state,
      tools: [],
      provider: {},
      config: { options: { image: "seed-echo", containerPort: 9090 } },
    } as never;
    await expect(factory.open(options)).rejects.toThrow(
      /docker\.mjs run timed out after 5s \(it said: WARNING: IPv4 forwarding is disabled/,
    );
    expect(readdirSync(join(state, "containers"))).toEqual([]);
    const removed = readCalls(state).filter((c) => c[0] === "rm");
    expect(removed).toEqual([["rm", "-f", "-v", expect.stringMatching(/^fake\d+$/)]]);
    // A create the daemon still had in hand would be listed by no sweep: the run's record stays for the next
    // Brain's start, which removes what carries its label.
    const [record] = readdirSync(containerRecordsDir(home));
    const run = readCalls(state).find((c) => c[0] === "run")!;
    expect(run).toEqual(
      expect.arrayContaining(["--label", `brain.run=${/^run-(.*)\.json$/.exec(record!)?.[1]}`]),
    );
  });
});

describe("a container's init from /proc", () => {
  let proc = "";
  afterEach(() => rmSync(proc, { recursive: true, force: true }));

  /** A /proc with these processes: pid → [parent, cgroup file]. */
  function fakeProc(processes: Record<number, [number, string]>): string {
    proc = tempDir("fake-proc-");
    for (const [pid, [parent, cgroup]] of Object.entries(processes)) {
      mkdirSync(join(proc, pid));
      writeFileSync(join(proc, pid, "cgroup"), cgroup);
      writeFileSync(join(proc, pid, "stat"), `${pid} (node (x) y) S ${parent} ${pid} 0 0\n`);
    }
    mkdirSync(join(proc, "self"));
    return proc;
  }

  const host = "0::/\n";
  const inContainer = (id: string) => `4:memory:/process_api/x/docker/${id}\n0::/\n`;

  it("is the one process in the container's cgroup whose parent is outside it", async () => {
    const p = fakeProc({
      10: [1, host], // the shim
      11: [10, inContainer(NEW)], // its init
      12: [11, inContainer(NEW)], // a child of the init
      20: [10, inContainer(STALE)], // another container's init
    });
    expect(await containerInit(NEW, p)).toBe(11);
    expect(await containerInit(`docker-${NEW}.scope`, p)).toBeUndefined(); // not an id docker printed
  });

  it("is undefined (Docker is asked) when /proc is unclear: no such container, two roots, no /proc", async () => {
    expect(await containerInit(NEW, fakeProc({ 10: [1, host] }))).toBeUndefined();
    rmSync(proc, { recursive: true, force: true });
    const execd = fakeProc({ 11: [10, inContainer(NEW)], 13: [10, inContainer(NEW)] });
    expect(await containerInit(NEW, execd)).toBeUndefined();
    expect(await containerInit(NEW, join(proc, "missing"))).toBeUndefined();
  });

  it("Container.pid asks Docker when /proc does not show the container", async () => {
    const { cli, calls } = fakeCli({ inspect: "4242\n" });
    expect(await new Container(cli, "fake-id", "img", 1_000).pid()).toBe(4242);
    expect(calls).toEqual([["inspect", "-f", "{{.State.Pid}}", "fake-id"]]);
  });
});
