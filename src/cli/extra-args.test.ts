// A word past the arguments a command reads is refused as a usage error, before anything is done. Left unread,
// `brain sessions rm A B` deleted A, said nothing of B and exited 0; `brain demo x` ran the demo.
import { expect, it } from "vitest";
import { sessionIdFrom, useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("extra-args");

it("refuses a second session ID to sessions rm and deletes neither", () => {
  const a = sessionIdFrom(cli.run(["run", "first"]).err);
  const b = sessionIdFrom(cli.run(["run", "second"]).err);
  const rm = cli.run(["sessions", "rm", a, b]);
  expect(rm.err).toContain(`unexpected argument "${b}": sessions rm takes one session ID`);
  expect(rm.code).toBe(2);
  expect(cli.run(["sessions", "show", a]).code).toBe(0);
  expect(cli.run(["sessions", "show", b]).code).toBe(0);
});

// Each fails first on the extra word: the ids are unknown, the flags bad, so a command that read on would fail
// otherwise (or, for demo and harnesses, succeed), never with this message.
it.each([
  [["checkpoint", "nope", "x"]],
  [["fork", "nope", "x"]],
  [["handoff", "nope", "x", "--to", "echo"]],
  [["restore", "nope", "x", "--into", "copy"]],
  [["sessions", "show", "nope", "x"]],
  [["sessions", "ls", "x"]],
  [["attach", "nope", "x", "--server", "http://127.0.0.1:9"]],
  [["agents", "show", "nope", "x"]],
  [["ext", "rm", "nope", "x"]],
  [["token", "add", "x", "--tenant", "bad tenant"]],
  [["demo", "x"]],
  [["harnesses", "x"]],
  [["serve", "x", "--port", "no"]],
  [["acp", "x", "--server", "http://127.0.0.1:9"]],
  [["conformance", "x", "--harness", "nope"]],
])("refuses brain %j", (args) => {
  const { code, err } = cli.run(args);
  expect(err).toMatch(/^brain: unexpected argument "x": /);
  expect(code).toBe(2);
});
