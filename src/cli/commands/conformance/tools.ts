// Tools the conformance kit binds besides the built-in echo: one that always fails (failure separation) and
// one that waits until its call is cancelled (clean interruption).
import type { ToolResult, ToolSchema } from "../../../protocol/runner.js";
import { type ToolService, textResult } from "../../../tools/tool-service.js";

export const FAIL_MESSAGE = "conformance: the fail tool always fails";

export class ConformanceTools implements ToolService {
  async list(): Promise<ToolSchema[]> {
    return [
      { name: "fail", description: "Always fails.", input_schema: { type: "object" } },
      { name: "wait", description: "Waits until the turn is interrupted.", input_schema: { type: "object" } },
    ];
  }

  call(name: string, _args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    if (name === "fail") return Promise.resolve(textResult(FAIL_MESSAGE, true));
    return new Promise((resolve) => {
      const done = () => resolve(textResult("conformance: wait was cancelled", true));
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    });
  }
}
