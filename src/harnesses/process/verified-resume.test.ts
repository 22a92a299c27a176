// Verified resume for runners: Brain does not know a runner's native format, so a reopened runner must keep the
// last answered prompt somewhere in its native dir (any file, any JSON escape); when it does not, the turn
// fails loudly and `rebuild` gives the runner the history as a marked summary in its next prompt.
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessFactory } from "../../core/harness.js";
import type { BrainConfig } from "../../protocol/config.js";
import { echoFactory, events as logOf, makeBrain, type TestBrain, textOf } from "../../testing/brain.js";
import type { FamilyContext } from "../family.js";
import { echoRunnerPath, runnerFamily } from "./descriptor.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

async function answered(
  factories?: HarnessFactory[],
  text = "remember PLUM",
): Promise<{ id: string; native: string }> {
  t = makeBrain(factories ? { factories } : {});
  const session = await t.brain.create({ harness: "echo" });
  expect((await (await session.prompt(text)).settled).status).toBe("completed");
  return { id: session.id, native: t.store.paths(session.id).native };
}

/** A restarted host: the runner process is a new one, opened on the native dir as it is now. */
async function reopened(id: string, text: string, factories?: HarnessFactory[]) {
  await t!.brain.close();
  t = makeBrain({ home: t!.home, ...(factories ? { factories } : {}) });
  const session = await t.brain.session(id);
  const { turn, settled } = await session.prompt(text);
  return { session, turn, outcome: await settled };
}

describe("verified resume on a runner", () => {
  it("resumes when the runner's files hold the conversation", async () => {
    const { id } = await answered();
    const { session, turn, outcome } = await reopened(id, "again");
    expect(outcome.status).toBe("completed");
    expect(textOf(await logOf(session), turn)).toBe("echo #2: again");
  });

  it("resumes a runner whose transcript ends in a line cut short (a write that ran out of disk)", async () => {
    const { id, native } = await answered();
    const transcript = join(native, "echo.jsonl");
    appendFileSync(transcript, '{"role":"user","text":"cut sh');
    const { session, turn, outcome } = await reopened(id, "again");
    expect(outcome.status, JSON.stringify(outcome.error)).toBe("completed");
    expect(textOf(await logOf(session), turn)).toBe("echo #2: again");
    // The next entry starts a line of its own: the cut one is not glued to it, so a later open reads it whole.
    expect(readFileSync(transcript, "utf8").split("\n").slice(-4)).toEqual([
      '{"role":"user","text":"cut sh',
      '{"role":"user","text":"again"}',
      '{"role":"assistant","text":"echo #2: again"}',
      "",
    ]);
  });

  it("fails loudly when the runner kept nothing, and a rebuild sends the history as a marked summary", async () => {
    const { id, native } = await answered();
    rmSync(join(native, "echo.jsonl"));
    const { outcome } = await reopened(id, "what was it?");
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.code).toBe("brain_error");
    expect(outcome.error?.message).toMatch(
      /^echo: the native state of runner "echo" is missing, but Brain's log has 1 answered turn it should hold \(last prompt "remember PLUM"\)\. .*brain sessions rebuild/,
    );

    const { seeded } = await t!.brain.rebuild(id);
    expect(seeded.how).toBe("summary");
    expect((await t!.brain.record(id)).seeded?.how).toBe("summary");
    const session = await t!.brain.session(id);
    const next = await session.prompt("what was it?");
    expect((await next.settled).status).toBe("completed");
    const reply = textOf(await logOf(session), next.turn);
    expect(reply).toContain("[Conversation history, carried over");
    expect(reply).toContain("User: remember PLUM");
    // The runner holds what came after the rebuild: a later restart resumes, and prompts go as they are.
    const after = await reopened(id, "and now");
    expect(after.outcome.status).toBe("completed");
    expect(textOf(await logOf(after.session), after.turn)).toBe("echo #2: and now");
  });

  it("fails loudly when the runner's files hold another conversation", async () => {
    const { id, native } = await answered();
    writeFileSync(join(native, "echo.jsonl"), `${JSON.stringify({ role: "user", text: "other" })}\n`);
    const { outcome } = await reopened(id, "what was it?");
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toMatch(
      /runner "echo" \(echo\.jsonl\) does not hold the last prompt .*sets "verify_history": false/,
    );
  });

  it("resumes a runner whose state is in any folder of its native dir, under any JSON escape", async () => {
    const { id, native } = await answered(undefined, "is 1 < 2 & 3?");
    // The seed reserves no part of the native dir (`work` is the CLI families' working tree, never a runner's),
    // and Go's encoding/json writes `<` and `&` as \u003c and \u0026.
    rmSync(join(native, "echo.jsonl"));
    mkdirSync(join(native, "work"), { recursive: true });
    writeFileSync(join(native, "work", "go.json"), '{"text":"is 1 \\u003c 2 \\u0026 3?"}');
    expect((await reopened(id, "again")).outcome.status).toBe("completed");
  });

  it("does not check a runner configured with verify_history: false", async () => {
    const stateless = () => [echoFactory({ verifyHistory: false })];
    const { id, native } = await answered(stateless());
    rmSync(join(native, "echo.jsonl"));
    const { outcome } = await reopened(id, "again", stateless());
    expect(outcome.status).toBe("completed");
  });

  it("does not check one configured with verify_history: false behind a launcher either (a dev container's)", async () => {
    const config = {
      harnesses: { echo: { command: [process.execPath, echoRunnerPath()], verify_history: false } },
    } as unknown as BrainConfig;
    // The launcher starts the runner as a container's exec does: `node` by name, found on its PATH.
    const launcher = ["/usr/bin/env", `PATH=${dirname(process.execPath)}:${process.env.PATH ?? ""}`];
    const stateless = () =>
      runnerFamily.launched!({ config, configDir: tmpdir() } as FamilyContext, launcher).filter(
        (factory) => factory.name === "echo",
      );
    const { id, native } = await answered(stateless());
    rmSync(join(native, "echo.jsonl"));
    const { outcome } = await reopened(id, "again", stateless());
    expect(outcome.status).toBe("completed");
  });
});
