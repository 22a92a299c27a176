// `brain handoff` and `brain sessions rebuild` through bin/brain.js, on the echo runner (the default harness
// here): a family Brain cannot seed natively, so the history goes as a marked summary in the next prompt.
import { describe, expect, it } from "vitest";
import { sessionIdFrom, useBrainCli } from "../testing/brain-cli.js";

const brain = useBrainCli("cli-handoff").run;

describe("brain handoff and brain sessions rebuild", () => {
  it("hands a session to a harness as a new linked session that starts with the history", () => {
    const id = sessionIdFrom(brain(["run", "remember PAPAYA"]).err);
    const handed = brain(["handoff", id, "--to", "echo"]);
    expect(handed.code, handed.err).toBe(0);
    const moved = handed.out.trim();
    expect(handed.err).toContain(`handed session ${id} to echo as new session ${moved}`);
    expect(handed.err).toContain("as a summary");
    expect(JSON.parse(brain(["sessions", "show", moved]).out).handoff_from).toMatchObject({ session: id });
    const reply = brain(["run", "--session", moved, "go on"]).out;
    expect(reply).toContain("[Conversation history, carried over");
    expect(reply).toContain("User: remember PAPAYA");
    expect(brain(["handoff", id]).err).toContain("handoff needs --to HARNESS");
    expect(brain(["handoff", id, "--to", "nope"]).err).toMatch(/unknown harness "nope"/);
  });

  it("rebuilds a session's native state from its log", () => {
    const id = sessionIdFrom(brain(["run", "remember KIWI"]).err);
    const rebuilt = brain(["sessions", "rebuild", id]);
    expect(rebuilt.code, rebuilt.err).toBe(0);
    expect(rebuilt.out).toContain(`${id}: native state rebuilt from the log as a marked summary`);
    const reply = brain(["run", "--session", id, "and now?"]).out;
    expect(reply).toContain("User: remember KIWI");
  });
});
