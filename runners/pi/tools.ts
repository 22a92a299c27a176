// The model's tools are exactly the open frame's: each runs in Brain through a reverse `tool.call` on the
// running turn. Nothing runs in this process, and nothing is checked here: pi's agent core validates arguments
// against a tool's `parameters` and answers a bad call itself, so Brain would never log it. The agent's tools
// therefore carry a schema that accepts any object; the model still sees the bound schema (provider.ts puts it
// back into each request) and Brain's router checks the arguments against it, answering a bad call with an error
// result that reaches the model. A call of a tool not bound at all is Brain's to answer too (hostTool, added to
// the run's tools when the model's reply names it: provider.ts).
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { TSchema } from "@mariozechner/pi-ai";
import { RunnerFailure, type ToolSchema, type Turn, TurnInterrupted } from "../../sdk/ts/index.js";

/** Carried from execute() to afterToolCall(): pi only marks a result as an error when execute throws. */
export interface HostToolDetails {
  isError: boolean;
}

/** What pi-ai checks a call against: any object, so every call reaches execute() with the model's own arguments. */
const ANY_ARGUMENTS = { type: "object" } as unknown as TSchema;

export function hostTools(schemas: ToolSchema[], currentTurn: () => Turn | undefined): AgentTool[] {
  return schemas.map((schema) => hostTool(schema, currentTurn));
}

/** One tool run by Brain: a bound one, or any name the model calls (Brain then answers that it is not bound). */
export function hostTool(
  schema: Pick<ToolSchema, "name" | "description">,
  currentTurn: () => Turn | undefined,
): AgentTool {
  return {
    name: schema.name,
    label: schema.name,
    description: schema.description ?? "",
    parameters: ANY_ARGUMENTS,
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
  };
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
