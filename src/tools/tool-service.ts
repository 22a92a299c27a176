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

/**
 * Tool services that belong to one session (its MCP servers): started when the session first needs its tools,
 * stopped when it closes. Their tools are bound to the session in addition to the names in `config.tools`.
 */
export interface SessionToolServices {
  /** Starts the services (once); resolves when each has started or failed. `report` logs state changes. */
  start(report: (event: ToolServiceEvent) => void): Promise<ToolService[]>;
  close(): Promise<void>;
}

export interface ToolServiceEvent {
  service: string;
  state: "started" | "failed" | "exited" | "restarted" | "stopped";
  message?: string;
  tools?: string[];
}

export function textResult(text: string, isError = false): ToolResult {
  return { content: [{ type: "text", text }], is_error: isError };
}
