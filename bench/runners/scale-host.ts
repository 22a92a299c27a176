// The scale figures, each in a fresh process of its own so nothing earlier in the bench run is counted:
//   attached N   N sessions opened on one shared runner host (the flood runner): growth of this process's RSS
//                and of the runner's, after a full GC, from one session to N + 1
//   idle N       N idle sessions created in the daemon: file descriptors and RSS this process holds for them
// Prints one JSON line: {"sessions":N,"brainBytes":…,"runnerBytes":…,"fds":…,"seconds":…}.
import { readdirSync, readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Brain } from "../../src/core/brain.js";
import { HarnessRegistry } from "../../src/core/registry.js";
import { ProcessFactory } from "../../src/harnesses/process/factory.js";
import { newToken } from "../../src/server/auth/tokens.js";
import { startDaemon } from "../../src/server/daemon.js";
import { FsSessionStore } from "../../src/store/fs/index.js";
import { BuiltinTools } from "../../src/tools/builtin.js";
import { ToolRouter } from "../../src/tools/router.js";
import { floodRunnerPath } from "../lib/brain.js";
import { childPids } from "../lib/cleanup.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const [mode = "attached", count = "1000", home = ""] = process.argv.slice(2);
const n = Number(count);

function rssOf(pid: number | "self"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return kb * 1024;
}

const fds = () => readdirSync("/proc/self/fd").length;

async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const store = new FsSessionStore(home);
const factory = new ProcessFactory({
  name: "flood",
  command: process.execPath,
  args: [floodRunnerPath()],
  shared: true,
});
const brain = new Brain({
  store,
  harnesses: new HarnessRegistry([factory]),
  tools: new ToolRouter([new BuiltinTools()]),
});
const t0 = process.hrtime.bigint();
let out: Record<string, number>;
if (mode === "attached") {
  const first = await brain.create({ harness: "flood" });
  await first.start();
  // The runner is the spawn host's child (see Spawner), not this process's.
  const runner = childPids().flatMap((host) => childPids(host))[0];
  if (runner === undefined) throw new Error("scale: no runner process under the spawn host");
  await settle();
  const brain0 = rssOf("self");
  const runner0 = rssOf(runner);
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, async () => {
      const session = await brain.create({ harness: "flood" });
      await session.start();
    });
    await Promise.all(batch);
  }
  await settle();
  out = {
    sessions: n,
    brainBytes: rssOf("self") - brain0,
    runnerBytes: rssOf(runner) - runner0,
    fds: fds(),
  };
} else {
  const daemon = await startDaemon({
    brain,
    port: 0,
    tokens: [{ token: newToken(), tenant: "default", role: "controller" }],
  });
  const caller = { tenant: "default", role: "controller" as const };
  await daemon.sessions.create(caller, { harness: "flood" });
  await settle();
  const fds0 = fds();
  const rss0 = rssOf("self");
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, () =>
      daemon.sessions.create(caller, { harness: "flood" }),
    );
    await Promise.all(batch);
  }
  // An idle log closes its file after a second without appends or reads (JsonlEventLog's idleMs).
  await new Promise((resolve) => setTimeout(resolve, 1_300));
  await settle();
  out = { sessions: n, fds: fds() - fds0, brainBytes: rssOf("self") - rss0, runnerBytes: 0 };
  await daemon.close();
}
out.seconds = Number(process.hrtime.bigint() - t0) / 1e9;
await brain.close();
process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
