// Brain's detached process groups are killed at its exit through one "exit" listener: one per group warned past
// Node's limit of 10 (a daemon with a dozen MCP servers) and each was left registered by nothing that owned it.
import { expect, it } from "vitest";
import { ExitKills } from "./exit-kills.js";

it("holds one exit listener for any number of groups, and none once each is forgotten", () => {
  const before = process.listenerCount("exit");
  const exits = new ExitKills();
  // Never signalled here: groups are killed only as the process exits.
  const forgets = Array.from({ length: 20 }, (_, i) => exits.add(4_000_000 + i));
  expect(process.listenerCount("exit")).toBe(before + 1);
  for (const forget of forgets) forget();
  forgets[0]!(); // twice: nothing more
  expect(process.listenerCount("exit")).toBe(before);
});
