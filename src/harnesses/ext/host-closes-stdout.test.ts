// A stdio host that closes its stdout mid-turn and lives on can never answer again: Brain fails the turn saying
// so (with the last of its stderr, as for a host that died), kills it, and the next turn starts a new host.
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { useScratch } from "../../testing/nui.js";

const { pythonHost } = useScratch();

// Each host writes its pid to stderr first: the test checks that the one that closed its stdout is gone. The pipe
// to Brain is closed wherever it is: serve_stdio() moves it off fd 1 (which it points at stderr, for child processes).
const HOST = `
import os, sys, time
from nui_agent_stdio import NuiAgent
sys.stderr.write("pid %d\\n" % os.getpid())
sys.stderr.flush()
PIPE = os.fstat(1)
def close_stdout():
    for fd in range(256):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (PIPE.st_dev, PIPE.st_ino):
            os.close(fd)
class Closes(NuiAgent):
    def run(self, message, run_id, **kwargs):
        yield "before "
        if message == "close":
            time.sleep(0.2)  # the text goes out before stdout does
            sys.stderr.write("fatal: lost my stdout\\n")
            sys.stderr.flush()
            close_stdout()
            time.sleep(600)
        if message == "torn":
            with self._lock():
                self._writer('{"jsonrpc":"2.0","method":"harness.event","params":{"runId":"' + run_id + '","type"')
            close_stdout()
            time.sleep(600)
        yield "alive"
Closes().serve_stdio()
`;

const pidIn = (message: string | undefined) => Number(/pid (\d+)/.exec(message ?? "")?.[1]);

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it("a stdio host that closes its stdout and lives on fails the turn saying so, is killed, and the next turn starts a new one", async () => {
  const brain = await pythonHost("closes", "stdio", HOST);
  const session = await brain.create({ harness: "ext:closes/echo" });
  const turn = await session.prompt("close");
  const settled = await turn.settled;
  expect(settled.status).toBe("failed");
  expect(settled.error?.message).toMatch(
    /^extension host for ext:closes\/echo closed its stdout; its stderr ended with: pid \d+\nfatal: lost my stdout$/,
  );
  expect(textOf(await events(session), turn.turn)).toBe("before ");
  const pid = pidIn(settled.error?.message);
  expect(pid).toBeGreaterThan(0);
  await expect.poll(() => running(pid)).toBe(false);

  const next = await session.prompt("again");
  expect((await next.settled).status).toBe("completed");
  expect(textOf(await events(session), next.turn)).toBe("before alive");
});

it("a stdio host that closes its stdout in the middle of a line says that its stdout was cut", async () => {
  const brain = await pythonHost("tears", "stdio", HOST);
  const session = await brain.create({ harness: "ext:tears/echo" });
  const settled = await (await session.prompt("torn")).settled;
  expect(settled.status).toBe("failed");
  expect(settled.error?.message).toMatch(
    /^extension host for ext:tears\/echo closed its stdout: stream ended in the middle of a frame \(\d+ bytes without a newline\); its stderr ended with: pid \d+$/,
  );
  const pid = pidIn(settled.error?.message);
  expect(pid).toBeGreaterThan(0);
  await expect.poll(() => running(pid)).toBe(false);
  expect((await (await session.prompt("again")).settled).status).toBe("completed");
});
