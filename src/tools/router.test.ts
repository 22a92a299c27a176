// Dispatch of bound tools: arguments checked, every failure an error result, and an interrupt answering every
// call waiting on its turn at once, whether or not the tool honours the signal.
import { describe, expect, it } from "vitest";
import type { ToolResult, ToolSchema } from "../protocol/runner.js";
import { ToolRouter } from "./router.js";
import { type ToolService, textResult } from "./tool-service.js";

const schema = (name: string): ToolSchema => ({
  name,
  description: name,
  input_schema: { type: "object", properties: { value: { type: "string" } }, additionalProperties: false },
});

/** `hang` never answers; `boom` throws before returning a promise; `echo` answers. */
class Tools implements ToolService {
  calls = 0;
  async list(): Promise<ToolSchema[]> {
    return [schema("hang"), schema("boom"), schema("echo")];
  }
  call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    this.calls++;
    if (name === "hang") return new Promise(() => {});
    if (name === "boom") throw new Error("broken before it started");
    return Promise.resolve(textResult(String(args.value)));
  }
}

const params = (name: string, value = "v") => ({ id: `c-${name}`, name, arguments: { value } });

describe("ToolRouter's bound tools", () => {
  it("answers every call waiting on a turn when it is interrupted, and later turns' calls as usual", async () => {
    const tools = new Tools();
    const bound = await new ToolRouter([tools]).bind(["hang", "echo"]);
    const turn = new AbortController();
    const waiting = [1, 2, 3].map(() => bound.call(params("hang"), turn.signal));
    expect(await bound.call(params("echo", "first"), turn.signal)).toEqual(textResult("first"));
    turn.abort();
    for (const result of await Promise.all(waiting)) {
      expect(result).toEqual(textResult('tool "hang" was cancelled: the turn was interrupted', true));
    }
    // Already interrupted: refused without running the tool.
    const before = tools.calls;
    expect((await bound.call(params("echo"), turn.signal)).is_error).toBe(true);
    expect(tools.calls).toBe(before);
    // A turn that ended for another reason (its runner crashed) says that one, not an interrupt.
    const failed = new AbortController();
    const abandoned = bound.call(params("hang"), failed.signal);
    failed.abort(new Error('the turn failed: runner "x" exited with code 3'));
    expect(await abandoned).toEqual(
      textResult('tool "hang" was cancelled: the turn failed: runner "x" exited with code 3', true),
    );
    const next = new AbortController();
    expect(await bound.call(params("echo", "again"), next.signal)).toEqual(textResult("again"));
  });

  it("turns a tool that throws at once into an error result, and refuses bad arguments naming them", async () => {
    const bound = await new ToolRouter([new Tools()]).bind(["boom", "echo"]);
    const signal = new AbortController().signal;
    expect(await bound.call(params("boom"), signal)).toEqual(
      textResult('tool "boom" failed: broken before it started', true),
    );
    const bad = await bound.call({ id: "c", name: "echo", arguments: { other: 1 } }, signal);
    expect(bad.is_error).toBe(true);
    expect(bad.content[0]).toMatchObject({
      text: expect.stringMatching(/invalid arguments for tool "echo"/),
    });
    expect((await bound.call({ id: "c", name: "hang", arguments: {} }, signal)).content[0]).toMatchObject({
      text: expect.stringMatching(/not bound to this session/),
    });
  });

  it("leaves a schema's regex checks to the tool's server: a catastrophic pattern cannot block the daemon", async () => {
    // Backtracking on ^(a+)+$ doubles with each "a": 40 of them would hold the event loop for days.
    const hostile: ToolSchema = {
      name: "lookup",
      description: "lookup",
      input_schema: {
        type: "object",
        properties: { q: { type: "string", pattern: "^(a+)+$" } },
        patternProperties: { "^(b+)+$": { type: "number" } },
        additionalProperties: false,
        required: ["q"],
      },
    };
    const seen: Record<string, unknown>[] = [];
    const server: ToolService = {
      list: async () => [hostile],
      call: async (_name, args) => {
        seen.push(args);
        return textResult("the server refuses q: it does not match ^(a+)+$", true);
      },
    };
    const bound = await new ToolRouter([server]).bind(["lookup"]);
    const signal = new AbortController().signal;
    const q = `${"a".repeat(40)}!`;
    const result = await bound.call({ id: "c1", name: "lookup", arguments: { q, bbbb: 1 } }, signal);
    expect(result).toEqual(textResult("the server refuses q: it does not match ^(a+)+$", true));
    expect(seen).toEqual([{ q, bbbb: 1 }]);
    // Every other check still holds: a wrong type and a missing required property are refused here.
    const wrong = await bound.call({ id: "c2", name: "lookup", arguments: { q: 1 } }, signal);
    expect(wrong.content[0]).toMatchObject({ text: expect.stringMatching(/\/q must be string/) });
    const missing = await bound.call({ id: "c3", name: "lookup", arguments: {} }, signal);
    expect(missing.content[0]).toMatchObject({ text: expect.stringMatching(/required property 'q'/) });
    expect(seen).toHaveLength(1);
  });

  it("leaves every pattern to the server, also those a $ref, `dependencies` or a $ref into a value reaches", async () => {
    // Enough backtracking to show whether the pattern ran, not so much that a regression blocks the test.
    const catastrophic = "^(a+)+$";
    const schemas: Record<string, Record<string, unknown>> = {
      dependencies: {
        type: "object",
        dependencies: { x: { properties: { x: { type: "string", pattern: catastrophic } } } },
      },
      ref: { type: "object", properties: { x: { $ref: "#/hidden" } }, hidden: { pattern: catastrophic } },
      refIntoValue: {
        type: "object",
        properties: { x: { $ref: "#/default/0" } },
        default: [{ pattern: catastrophic }],
      },
    };
    const server: ToolService = {
      list: async () =>
        Object.entries(schemas).map(([name, input_schema]) => ({ name, description: name, input_schema })),
      call: async (name) => textResult(`${name} ran`),
    };
    const bound = await new ToolRouter([server]).bind(Object.keys(schemas));
    const signal = new AbortController().signal;
    const x = `${"a".repeat(20)}!`;
    for (const name of Object.keys(schemas))
      expect(await bound.call({ id: name, name, arguments: { x } }, signal)).toEqual(
        textResult(`${name} ran`),
      );
  });

  it("leaves uniqueItems to the server: a long array of arrays is not compared pair by pair on the daemon's loop", async () => {
    const tagged: ToolSchema = {
      name: "tag",
      description: "tag",
      input_schema: {
        type: "object",
        properties: { tags: { type: "array", items: { type: "array" }, uniqueItems: true } },
        required: ["tags"],
      },
    };
    const server: ToolService = { list: async () => [tagged], call: async () => textResult("tagged") };
    const bound = await new ToolRouter([server]).bind(["tag"]);
    const signal = new AbortController().signal;
    // Compared pair by pair (from the end), 60,000 items (a 400 KB argument) held the loop for over a minute
    // before it came to the duplicate at the start, which is the server's to refuse.
    const tags = [[0], ...Array.from({ length: 60_000 }, (_, i) => [i])];
    expect(await bound.call({ id: "c1", name: "tag", arguments: { tags } }, signal)).toEqual(
      textResult("tagged"),
    );
    // The other checks of the schema still hold.
    const wrong = await bound.call({ id: "c2", name: "tag", arguments: { tags: [1] } }, signal);
    expect(wrong.content[0]).toMatchObject({ text: expect.stringMatching(/\/tags\/0 must be array/) });
  });
});
