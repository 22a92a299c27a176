// Tools built into Brain, for demos and tests. `echo` is the seed's example: {"value": "hi"} returns "hi".
import type { ToolResult, ToolSchema } from "../protocol/runner.js";
import { type ToolService, textResult } from "./tool-service.js";

const echo: ToolSchema = {
  name: "echo",
  description: "Echo text back: returns `value` unchanged.",
  input_schema: {
    type: "object",
    properties: { value: { type: "string", description: "The text to return." } },
    required: ["value"],
    additionalProperties: false,
  },
};

export class BuiltinTools implements ToolService {
  async list(): Promise<ToolSchema[]> {
    return [echo];
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    if (name === "echo") return textResult(String(args.value));
    return textResult(`no built-in tool named "${name}"`, true);
  }
}
