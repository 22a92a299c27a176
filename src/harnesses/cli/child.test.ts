// A CLI agent's process, forked from Brain or started by the spawn host: the same lines, stdin, exits and
// failures either way, including what is asked of it before the host has started it.
import { afterEach, describe, expect, it } from "vitest";
import { alive, until } from "../../testing/processes.js";
import { Spawner } from "../process/spawner.js";
import { CliProcess, type CliSpawn } from "./child.js";

const releases: (() => void)[] = [];
/** Processes a test's CLI left behind, killed here should the test fail before their group is. */
const helpers: number[] = [];
afterEach(() => {
  for (const release of releases.splice(0)) release();
  for (const pid of helpers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

function spawner(): Spawner {
  const s = new Spawner();
  releases.push(s.use());
  return s;
}

const ECHO_LINES =
  "process.stdin.on('data', (d) => process.stdout.write(d)); process.stdin.on('end', () => process.exit(3));";

function cli(how: "forked" | "host", spec: Partial<CliSpawn> = {}): { child: CliProcess; lines: string[] } {
  const lines: string[] = [];
  const child = new CliProcess({
    label: "test-cli",
    command: process.execPath,
    args: ["-e", ECHO_LINES],
    env: { PATH: process.env.PATH ?? "" },
    cwd: process.cwd(),
    onLine: (line) => lines.push(line),
    ...(how === "host" ? { spawner: spawner() } : {}),
    ...spec,
  });
  return { child, lines };
}

describe.each(["forked", "host"] as const)("CliProcess (%s)", (how) => {
  it("reads what it writes as lines, and its stop ends stdin first: written before it started, kept in order", async () => {
    const { child, lines } = cli(how);
    child.write("one\n");
    child.write("two\n");
    await child.stop();
    expect(lines).toEqual(["one", "two"]);
    expect(await child.exited).toEqual({ code: 3, signal: null });
    expect(child.describeExit()).toBe("test-cli: node exited with code 3");
  });

  it("kills its process group, even when asked before it started", async () => {
    const { child } = cli(how);
    child.kill("SIGKILL");
    expect(await child.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(child.stopRequested).toBe(true);
  });

  it("sees it exit while a process it started holds its stdout, reads its last line, and kills that process", async () => {
    const lines: string[] = [];
    const { child } = cli(how, {
      command: "sh",
      // The helper inherits the CLI's stdout and stderr, as a tool it ran in the background (`tool &`) does.
      args: ["-c", 'sleep 300 & echo "helper $!"; exit 3'],
      onLine: (line) => {
        lines.push(line);
        const pid = /^helper (\d+)$/.exec(line)?.[1];
        if (pid) helpers.push(Number(pid));
      },
    });
    // Without the fix this waits for the helper's `sleep 300`: the test's timeout, not an assertion, catches it.
    expect(await child.exited).toEqual({ code: 3, signal: null });
    expect(child.describeExit()).toBe("test-cli: sh exited with code 3");
    expect(lines).toEqual([`helper ${helpers[0]}`]);
    await until(() => !alive(helpers[0]!));
  });

  it("takes what it left in its group with it when it ends at its stdin's end, though that holds no pipe of it", async () => {
    const lines: string[] = [];
    const { child } = cli(how, {
      command: "sh",
      // A tool it ran in the background, its output elsewhere; the CLI then ends at EOF, as most do.
      args: ["-c", 'sleep 300 </dev/null >/dev/null 2>&1 & echo "helper $!"; exec cat >/dev/null'],
      onLine: (line) => {
        lines.push(line);
        const pid = /^helper (\d+)$/.exec(line)?.[1];
        if (pid) helpers.push(Number(pid));
      },
    });
    await until(() => helpers.length > 0);
    expect(alive(helpers[0]!)).toBe(true);
    await child.stop();
    expect(await child.exited).toEqual({ code: 0, signal: null });
    await until(() => !alive(helpers[0]!));
  });

  it("says what could not be started", async () => {
    const reasons: string[] = [];
    const { child } = cli(how, {
      command: "/nonexistent/agent-cli",
      onExit: (reason) => reasons.push(reason),
    });
    const exit = await child.exited;
    expect(exit.error?.message).toMatch(/ENOENT/);
    expect(reasons).toEqual([expect.stringMatching(/^test-cli: agent-cli could not be started \(.*ENOENT/)]);
    child.write("nothing happens\n"); // gone: dropped, no throw
  });
});
