// opencode killed mid-turn (kill -9, the OOM killer): its event stream breaks before its exit is seen, and the turn
// failed with "the event stream broke: terminated", which says neither that the server died nor why. The exit,
// with the signal and the tail of its stderr, is what the turn now fails with. The stand-in resets its stream's
// socket, then kills itself, as the kernel does for a killed process: seen from Brain, in that order.
import { expect, it } from "vitest";
import { SERVE_HEAD, SERVE_TAIL, useHeldOpencode } from "./testing/stand-in.js";

const SERVE = `${SERVE_HEAD}
function prompt(req, res) {
  res.writeHead(204).end();
  message("msg_1");
  delta("msg_1", "working", () => {
    process.stderr.write("FATAL ERROR: Reached heap limit\\n");
    events.socket.resetAndDestroy();
    setTimeout(() => process.kill(process.pid, "SIGKILL"), 100);
  });
}
${SERVE_TAIL}`;

const heldOpencode = useHeldOpencode();

it("fails a turn whose opencode was killed with its exit and stderr, not a broken event stream", async () => {
  const { session } = await heldOpencode("brain-opencode-killed-", SERVE);
  const settled = await (await session.prompt("go")).settled;
  expect(settled.status).toBe("failed");
  expect(settled.error?.code).toBe("brain_error");
  expect(settled.error?.message).toMatch(
    /^opencode: .*killed by SIGKILL; its stderr ended with: FATAL ERROR: Reached heap limit/,
  );
});
