// `brain run` and questions: a nui extension's ask_user() is asked at the terminal when there is one, and
// without one it expires after the session's ask timeout with a message saying how it could be answered.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installExtension } from "../harnesses/ext/install.js";
import { events, makeBrain, scripted, tempDir, textOf } from "../testing/brain.js";
import { catalogFactories, fixtures } from "../testing/nui.js";
import { type AskPerson, answerRequests, HOW_TO_ANSWER } from "./answers.js";

const root = join(import.meta.dirname, "../..");
const demoPy = join(fixtures, "extensions/demo-py");
const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});
const dir = (prefix: string) => {
  const made = tempDir(prefix);
  scratch.push(made);
  return made;
};

describe("brain run and a nui extension's ask_user()", () => {
  it("without a terminal, expires the question after the configured timeout and says how to answer", async () => {
    const home = dir("brain-q-home-");
    await installExtension(demoPy, join(home, "extensions"));
    const work = dir("brain-q-work-");
    mkdirSync(work, { recursive: true });
    const config = { defaults: { permissions: { ask_timeout_ms: 300 } } };
    writeFileSync(join(work, "brain.config.json"), JSON.stringify(config));
    const result = spawnSync(
      process.execPath,
      [join(root, "bin/brain.js"), "run", "--harness", "ext:demo-py/echo", "ask"],
      { cwd: work, env: { ...process.env, BRAIN_HOME: home }, encoding: "utf8", input: "" },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toBe("status=expired answers={}\n");
    expect(result.stderr).toContain('[question "Pick one" got no answer (no client answered within 0.3 s): ');
    expect(result.stderr).toContain(HOW_TO_ANSWER);
    expect(HOW_TO_ANSWER).toMatch(/--server.*brain attach/);
  });

  it("on a terminal, asks the person and sends their answer back to the extension", async () => {
    const home = dir("brain-q-home-");
    await installExtension(demoPy, join(home, "extensions"));
    const { factories } = catalogFactories({ brainHome: home, hostHome: dir("brain-q-host-") });
    const t = makeBrain({ factories, home });
    try {
      const session = await t.brain.create({ harness: "ext:demo-py/echo" });
      const seen: unknown[] = [];
      const ask: AskPerson = async (request) => {
        seen.push(request.data);
        return { answer: "Stop" };
      };
      const stop = answerRequests(session, { allow: [], deny: [], interactive: true }, { ask });
      const turn = await session.prompt("ask");
      expect((await turn.settled).status).toBe("completed");
      stop();
      expect(seen).toEqual([
        expect.objectContaining({ question: "Pick one", options: ["Continue", "Stop"] }),
      ]);
      expect(textOf(await events(session), turn.turn)).toBe('status=answered answers={"Pick one": "Stop"}');
    } finally {
      await t.cleanup();
    }
  });

  it("writes a question's control characters as escapes when it expires unanswered", async () => {
    // An extension's question: JSON.stringify left its C1 controls (U+009B is CSI) raw.
    const asking = scripted(async (options, turn) => {
      await options.ask(turn, { question: "Pick\u009b2J one" }, new AbortController().signal);
    });
    const t = makeBrain({ factories: [asking] });
    try {
      const session = await t.brain.create({ harness: "scripted", permissions: { ask_timeout_ms: 50 } });
      let said = "";
      const err = { write: (text: string) => (said += text) } as unknown as NodeJS.WritableStream;
      const stop = answerRequests(session, { allow: [], deny: [], interactive: false }, { err });
      const turn = await session.prompt("go");
      await turn.settled;
      stop();
      expect(said).toContain('[question "Pick\\u009b2J one" got no answer');
      expect(said).not.toContain("\u009b");
    } finally {
      await t.cleanup();
    }
  });
});
