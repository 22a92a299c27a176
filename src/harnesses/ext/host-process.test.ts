// An extension host's process, forked from Brain or started by the spawn host: in a process group of its own, so
// a host started through a wrapper (uv run, npx, a shell) stops with the agent the wrapper started, and its exit
// is seen even while something it left behind still holds its pipes.
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { alive, until } from "../../testing/processes.js";
import { Spawner } from "../process/spawner.js";
import { HostProcess } from "./host-process.js";

const releases: (() => void)[] = [];
const hosts: HostProcess[] = [];
/** The agents the tests' wrappers started, killed here should a test fail before their group is. */
const agents: number[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) host.kill();
  for (const pid of agents.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  for (const release of releases.splice(0)) release();
});

/** A wrapper shell running `script`, whose agent (a long sleep) writes its pid to stdout first. */
function wrapped(how: "forked" | "host", script: string): { host: HostProcess; agent: Promise<number> } {
  let spawner: Spawner | undefined;
  if (how === "host") {
    spawner = new Spawner();
    releases.push(spawner.use());
  }
  const host = new HostProcess(
    {
      name: "ext:demo/agent",
      command: "sh",
      args: ["-c", `sleep 300 & echo "agent $!"; ${script}`],
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "" },
    },
    spawner,
  );
  hosts.push(host);
  const agent = new Promise<number>((resolve) => {
    let out = "";
    host.onStdout((chunk) => {
      out += chunk.toString("utf8");
      const pid = /agent (\d+)\n/.exec(out)?.[1];
      if (pid) {
        agents.push(Number(pid));
        resolve(Number(pid));
      }
    });
  });
  return { host, agent };
}

describe.skipIf(process.platform !== "linux").each(["forked", "host"] as const)("HostProcess (%s)", (how) => {
  it("stops a host started through a wrapper, and the agent the wrapper started with it", async () => {
    // `; :` keeps the shell from exec'ing into its last command: it stays the wrapper, the sleep its child.
    const { host, agent } = wrapped(how, "wait; :");
    const pid = await agent;
    // Without a group of its own the SIGTERM reaches the wrapper alone: the agent goes on, holding the pipes.
    await host.stop(200);
    expect(await host.exited).toBe("extension host for ext:demo/agent was killed by SIGTERM");
    await until(() => !alive(pid));
  });

  it("sees the exit of a host whose agent still holds its stdout, and the agent goes with it", async () => {
    const { host, agent } = wrapped(how, "exit 4");
    const pid = await agent;
    expect(await host.exited).toBe("extension host for ext:demo/agent exited with code 4");
    expect(host.alive).toBe(false);
    await until(() => !alive(pid));
  });
});
