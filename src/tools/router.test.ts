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
});
