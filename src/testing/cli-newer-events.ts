// What the newer-events tests of the CLI families (claude-code, codex, opencode) share: a newer CLI's lines set amid
// a real capture, and a real CLI's turn with a tool call, whose log must say no type is unknown.
import { expect } from "vitest";
import { events } from "./brain.js";
import { type CliBed, cliBed } from "./cli.js";
import type { CliFamilyCase } from "./cli-family.js";

/** `injected` before the captured lines and again after the first `at` of them, so each new type comes twice. */
export const amid = <T>(injected: T[], captured: T[], at: number): T[] => [
  ...injected,
  ...captured.slice(0, at),
  ...injected,
  ...captured.slice(at),
];

/** A real turn of `family`'s CLI (under unshare -n) that runs one tool: completed, and no warning of an unknown type. */
export async function expectRealTurnSaysNoTypeUnknown(family: CliFamilyCase): Promise<void> {
  let b: CliBed | undefined;
  try {
    b = await cliBed((launcher) => family.factory({ launcher }), family.provider);
    const session = await b.create();
    const turn = await session.prompt("List the files CMD[ls -1]");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
    const all = await events(session);
    expect(all.filter((e) => e.type === "tool.result").length).toBe(1);
    const warnings = all.filter((e) => e.type === "harness.warning").map((e) => JSON.stringify(e.data));
    expect(warnings.filter((w) => w.includes("does not know"))).toEqual([]);
  } finally {
    await b?.close();
  }
}
