// Where bound tools run. MCP servers, HTTP endpoints and built-ins all sit behind this one interface.
import type { ToolResult, ToolSchema } from "../protocol/runner.js";

export interface ToolService {
  /** The tools this service offers. */
  list(): Promise<ToolSchema[]>;
  /**
   * Runs one tool. A tool's own failure resolves to `{ is_error: true }`; reject only when the service itself
   * is broken (the router turns that into an error result too).
   */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
  close?(): Promise<void>;
}

export function textResult(text: string, isError = false): ToolResult {
  return { content: [{ type: "text", text }], is_error: isError };
}
