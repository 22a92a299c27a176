// Starting extension hosts. One that hangs at its start (it never answers harness.info): the open timeout is long
// here, so only an interrupt or a close can end what waits for it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { freePort } from "../../core/free-port.js";
import { events, textOf } from "../../testing/brain.js";
import { catalogFactories, tsAgent, useScratch, writeExtension } from "../../testing/nui.js";
import { pidAlive } from "./connection-file.js";
import { installExtension } from "./install.js";

const { scratch, brain: scratchBrain, closeBrain } = useScratch();

// Writes its pid under HOME, then neither reads nor answers.
const HANGING_HOST = `
import os, time
with open(os.path.join(os.environ["HOME"], "host.pid"), "w") as f:
    f.write(str(os.getpid()))
time.sleep(3600)
`;

async function hangingBrain() {
  const src = writeExtension(scratch("brain-ext-src-"), "hangs", { command: ["python3", "host.py"] });
  writeFileSync(join(src, "host.py"), HANGING_HOST);
  const home = scratch("brain-ext-home-");
  const hostHome = scratch("brain-ext-hosthome-");
  await installExtension(src, join(home, "extensions"));
  const { factories } = catalogFactories({
    brainHome: home,
    hostHome,
    extensionTimeouts: { openMs: 3_600_000 },
  });
  const t = scratchBrain({ factories, home });
  const session = await t.brain.create({ harness: "ext:hangs/echo" });
  const turn = await session.prompt("hi");
  const pidFile = join(hostHome, "host.pid");
  const readPid = () => {
    try {
      return Number(readFileSync(pidFile, "utf8"));
    } catch {
      return 0;
    }
  };
  await expect.poll(readPid).toBeGreaterThan(0);
  const pid = readPid();
  return { session, turn, pid };
}

it("an interrupt ends a turn whose host is still starting", async () => {
  const { session, turn } = await hangingBrain();
  await session.interrupt();
  expect((await turn.settled).status).toBe("interrupted");
});

it("closing the session stops a host that is still starting", async () => {
  const { turn, pid } = await hangingBrain();
  await closeBrain();
  expect((await turn.settled).status).not.toBe("completed");
  await expect.poll(() => pidAlive(pid)).toBe(false);
});

// After a reboot a host's connection file is left behind and its pid may name some other process: every turn was
// refused at the file's port, and Brain, which has the command to start the host, never did.
it("starts a shared host whose connection file names a running pid but a port nothing listens on", async () => {
  const src = writeExtension(scratch("brain-ext-src-"), "rebooted", {
    transport: "tcp",
    command: ["node", tsAgent, "tcp"],
  });
  const home = scratch("brain-ext-home-");
  const hostHome = scratch("brain-ext-hosthome-");
  await installExtension(src, join(home, "extensions"));
  const connections = join(hostHome, ".nui/connections");
  mkdirSync(connections, { recursive: true });
  const left = { host: "127.0.0.1", port: await freePort(), session_id: "old", pid: process.pid };
  writeFileSync(join(connections, "ext-rebooted-echo.json"), JSON.stringify(left));
  const { factories } = catalogFactories({ brainHome: home, hostHome });
  const t = scratchBrain({ factories, home });
  const session = await t.brain.create({ harness: "ext:rebooted/echo" });
  const turn = await session.prompt("hi");
  expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
  expect(textOf(await events(session), turn.turn)).toMatch(/^ts says: hi /);
});
