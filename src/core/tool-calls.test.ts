import { afterEach, describe, expect, it } from "vitest";
import type { ToolResult } from "../protocol/runner.js";
import { events, gatedTool, makeBrain, scripted, type TestBrain } from "../testing/brain.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("a call to a tool the session does not have", () => {
  it("is refused as unbound, and no client is asked to allow it", async () => {
    t = makeBrain();
    const session = await t.brain.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { default: "ask", ask_timeout_ms: 50 },
    });
    const turn = await session.prompt('call the tool "not_offered" with {"path":"/etc/shadow"}');
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(all.filter((e) => e.type.startsWith("permission."))).toEqual([]);
    expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: true,
      content: [{ text: 'tool "not_offered" is not bound to this session; bound tools: echo' }],
    });
  });

  it("is refused as unbound where the policy denies every tool, not blamed on the policy", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo", permissions: { default: "deny" } });
    await (await session.prompt('call the tool "not_offered" with {}')).settled;
    const result = (await events(session)).find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/is not bound to this session/) }],
    });
  });
});

describe("a harness that hands results on through answer", () => {
  it("gets the result once, before the call's promise settles, and the log keeps the same result after the call", async () => {
    const answers: ToolResult[] = [];
    let settledFirst = false;
    let returned: ToolResult | undefined;
    t = makeBrain({
      factories: [
        scripted(async ({ call }, turn) => {
          const params = { id: "c1", name: "echo", arguments: { value: "x" } };
          const promise = call(turn, params, new AbortController().signal, (result) => {
            answers.push(result);
          });
          void promise.then(() => {
            settledFirst ||= answers.length === 0;
          });
          returned = await promise;
        }),
      ],
    });
    const session = await t.brain.create({ harness: "scripted", config: { tools: ["echo"] } });
    expect((await (await session.prompt("go")).settled).status).toBe("completed");
    expect(answers).toHaveLength(1);
    expect(answers[0]?.content).toEqual([{ type: "text", text: "x" }]);
    expect(settledFirst).toBe(false);
    expect(returned).toEqual(answers[0]);
    const logged = (await events(session)).filter((e) => e.type.startsWith("tool."));
    expect(logged.map((e) => e.type)).toEqual(["tool.call", "tool.result"]);
    expect(logged[1]?.data).toEqual({ id: "c1", ...answers[0] });
  });
});

describe("a harness that gives a second call the id of a call", () => {
  it("still waiting for its result: refused with an error result that says so, and neither run nor logged", async () => {
    const { tools: gated, open } = gatedTool();
    const results: ToolResult[] = [];
    t = makeBrain({
      tools: [gated],
      factories: [
        scripted(async ({ call }, turn) => {
          const signal = new AbortController().signal;
          const params = { id: "c1", name: "gated", arguments: {} };
          const first = call(turn, params, signal);
          const second = call(turn, { ...params, arguments: { again: true } }, signal);
          open();
          results.push(await second, await first);
          // Answered, the id may name a new call (runners number their calls afresh after a restart).
          results.push(await call(turn, params, signal));
        }),
      ],
    });
    const session = await t.brain.create({ harness: "scripted", config: { tools: ["gated"] } });
    expect((await (await session.prompt("go")).settled).status).toBe("completed");
    expect(results.map((r) => [r.is_error, r.content[0]?.type === "text" && r.content[0].text])).toEqual([
      [
        true,
        'tool call id "c1" is already in use by a call still waiting for its result; give each call an id of its own',
      ],
      [false, "done"],
      [false, "done"],
    ]);
    const logged = (await events(session)).filter((e) => e.type.startsWith("tool."));
    expect(logged.map((e) => [e.type, e.data])).toEqual([
      ["tool.call", { id: "c1", name: "gated", arguments: {} }],
      ["tool.result", { id: "c1", ...results[1] }],
      ["tool.call", { id: "c1", name: "gated", arguments: {} }],
      ["tool.result", { id: "c1", ...results[2] }],
    ]);
  });
});
