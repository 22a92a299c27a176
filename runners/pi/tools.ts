// The model's tools are exactly the open frame's: each runs in Brain through a reverse `tool.call` on the
// running turn. Nothing runs in this process.
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { TSchema } from "@mariozechner/pi-ai";
import { RunnerFailure, type ToolSchema, type Turn, TurnInterrupted } from "../../sdk/ts/index.js";

/** Carried from execute() to afterToolCall(): pi only marks a result as an error when execute throws. */
export interface HostToolDetails {
  isError: boolean;
}

export function hostTools(schemas: ToolSchema[], currentTurn: () => Turn | undefined): AgentTool[] {
  return schemas.map((schema) => ({
    name: schema.name,
    label: schema.name,
    description: schema.description ?? "",
    // Plain JSON Schema: pi-ai validates (and coerces) arguments against it before calling execute().
    parameters: schema.input_schema as unknown as TSchema,
    async execute(toolCallId, args, signal): Promise<AgentToolResult<HostToolDetails>> {
      const turn = currentTurn();
      if (!turn) throw new RunnerFailure("brain_error", "a tool was called outside a turn");
      const result = await abortable(
        turn.callTool(schema.name, args as Record<string, unknown>, { id: toolCallId }),
        signal,
      );
      return {
        content: result.content.map((part) => ({ type: "text", text: part.text })),
        details: { isError: result.is_error },
      };
    },
  }));
}

/** The call, or a rejection as soon as the run is aborted (the turn's own interrupt rejects it already). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new TurnInterrupted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new TurnInterrupted());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
