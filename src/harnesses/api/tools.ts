// Brain's bound tools as the AI SDK sees them (schemas only: no `execute`, so the SDK hands every call back to
// us), and Brain's tool results as the tool message of the conversation.
import { jsonSchema, type ModelMessage, type ToolSet, tool } from "ai";
import type { ToolCallParams, ToolResult, ToolSchema } from "../../protocol/runner.js";
import { KEPT_RESULT_CHARS, shortenedResult } from "./conversation.js";
import type { StepToolCall } from "./step.js";

/**
 * No `validate` is given to `jsonSchema`, so the SDK passes every call through as the model wrote it: Brain's
 * router checks the arguments and logs a bad call as a failed tool result the model can learn from.
 */
export function toToolSet(schemas: ToolSchema[]): ToolSet {
  const tools: ToolSet = {};
  for (const schema of schemas) {
    tools[schema.name] = tool({
      ...(schema.description ? { description: schema.description } : {}),
      inputSchema: jsonSchema(schema.input_schema as Parameters<typeof jsonSchema>[0]),
    });
  }
  return tools;
}

/** The call as Brain's tool callback takes it, or the reason it cannot be one. */
export function toCallParams(call: StepToolCall): ToolCallParams | string {
  const input = call.input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    const raw = typeof input === "string" ? input : JSON.stringify(input);
    return `the arguments of ${call.name} must be a JSON object; got: ${raw}`;
  }
  return { id: call.id, name: call.name, arguments: input as Record<string, unknown> };
}

export function errorResult(text: string): ToolResult {
  return { content: [{ type: "text", text }], is_error: true };
}

export function toolMessage(calls: StepToolCall[], results: ToolResult[]): ModelMessage {
  return {
    role: "tool",
    content: calls.map((call, i) => {
      const result = results[i] ?? errorResult("no result");
      // As the conversation keeps it: the log has it as Brain's bound on a tool result left it.
      const value = shortenedResult(result.content.map((part) => part.text).join("\n"), KEPT_RESULT_CHARS);
      return {
        type: "tool-result" as const,
        toolCallId: call.id,
        toolName: call.name,
        output: result.is_error ? { type: "error-text" as const, value } : { type: "text" as const, value },
      };
    }),
  };
}
