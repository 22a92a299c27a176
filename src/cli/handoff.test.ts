// `brain handoff` and `brain sessions rebuild` through bin/brain.js, on the echo runner (the default harness
// here): a family Brain cannot seed natively, so the history goes as a marked summary in the next prompt.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";

const root = join(import.meta.dirname, "../..");
const home = tempDir("brain-cli-handoff-");
const work = tempDir("brain-cli-handoff-work-");
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

function brain(args: string[]) {
  const result = spawnSync(process.execPath, [join(root, "bin/brain.js"), ...args], {
    cwd: work,
    env: { ...process.env, BRAIN_HOME: home },
    encoding: "utf8",
    input: "",
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

function sessionIdFrom(stderr: string): string {
  const id = /session (\S+)\n/.exec(stderr)?.[1];
  if (!id) throw new Error(`no session id in: ${stderr}`);
  return id;
}

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
