// An MCP tool result as Brain's tool result. Brain's results are text, so other content is described in words
// (an image by its type and size, a resource by its URI) rather than dropped without a trace.
import type { ToolResult } from "../../protocol/runner.js";

interface McpContent {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; mimeType?: string; blob?: string };
}

export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

function describe(part: McpContent): string {
  switch (part.type) {
    case "text":
      return part.text ?? "";
    case "image":
    case "audio": {
      const bytes = Math.floor(((part.data?.length ?? 0) * 3) / 4);
      return `[${part.type}: ${part.mimeType ?? "unknown type"}, ${bytes} bytes]`;
    }
    case "resource": {
      const resource = part.resource ?? {};
      if (typeof resource.text === "string") return resource.text;
      return `[resource ${resource.uri ?? ""}${resource.mimeType ? ` (${resource.mimeType})` : ""}]`;
    }
    case "resource_link":
      return `[resource link ${part.uri ?? ""}${part.name ? ` "${part.name}"` : ""}]`;
    default:
      return `[${part.type} content]`;
  }
}

export function toToolResult(result: McpCallResult): ToolResult {
  const parts = Array.isArray(result.content) ? (result.content as McpContent[]) : [];
  const content = parts.map((part) => ({ type: "text" as const, text: describe(part) }));
  if (content.length === 0) {
    // Structured output only (or a legacy `toolResult`): its JSON is the text.
    const value = result.structuredContent ?? result.toolResult;
    if (value !== undefined) content.push({ type: "text", text: JSON.stringify(value) });
  }
  return { content, is_error: result.isError === true };
}
