// Where bound tools run. MCP servers, HTTP endpoints and built-ins all sit behind the one ToolService interface
// (declared in the core, which calls them).
import type { ToolResult } from "../protocol/runner.js";

export type { SessionToolServices, ToolService, ToolServiceEvent } from "../core/tools.js";

export function textResult(text: string, isError = false): ToolResult {
  return { content: [{ type: "text", text }], is_error: isError };
}
