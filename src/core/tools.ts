// What the core needs of tools: a catalog that binds tools to a session by name, and the bound set that runs
// calls. src/tools implements these (a router over MCP servers, HTTP endpoints and built-ins); the core never
// imports it, so a session runs the same over any implementation.
import { MCP_TOOL_SEPARATOR } from "../protocol/config.js";
import type { ToolCallParams, ToolResult, ToolSchema } from "../protocol/runner.js";
import { SessionError } from "./errors.js";

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
  /**
   * Starts the services (once); resolves when each has started or failed. `report` logs state changes. `bound`:
   * the names the session's config.tools binds, which keep them (a service leaves its tools of those names out).
   */
  start(report: (event: ToolServiceEvent) => void, bound?: readonly string[]): Promise<ToolService[]>;
  /**
   * Before a later turn: tries again the services whose first start failed, as their backoff allows. Resolves with
   * every service when one of them now offers tools (the session binds its tools afresh), else undefined.
   * `signal` (the turn's) gives the tries up.
   */
  retry?(
    report: (event: ToolServiceEvent) => void,
    bound: readonly string[],
    signal: AbortSignal,
  ): Promise<ToolService[] | undefined>;
  close(): Promise<void>;
  /** What in the services' config the session's log should warn about, once, as their session opens. */
  warnings?(): string[];
}

export interface ToolServiceEvent {
  service: string;
  state: "started" | "failed" | "exited" | "restarted" | "stopped";
  message?: string;
  tools?: string[];
}

/** The tools bound to one session. Every failure of a call is an error result, never a thrown error. */
export interface BoundTools {
  readonly schemas: ToolSchema[];
  has(name: string): boolean;
  /** These tools plus every tool of `services` (a session's own); bound names win. */
  including(services: ToolService[]): Promise<BoundTools>;
  call(call: ToolCallParams, signal: AbortSignal): Promise<ToolResult>;
}

/** The host's tools, bound to a session by name; an unknown name is refused naming the known ones. */
export interface ToolCatalog {
  bind(names: readonly string[]): Promise<BoundTools>;
}

/**
 * A tool of config.tools named in an MCP server's namespace (`server__…`) would take the place of that server's
 * tool of the name, unseen: refused when a session is made. (A session recorded before keeps its bound tool, and
 * the server's event says which of its tools it left out.)
 */
export function refuseShadowingTools(tools: readonly string[], servers: readonly string[]): void {
  for (const tool of tools) {
    const server = servers.find((s) => tool.startsWith(`${s}${MCP_TOOL_SEPARATOR}`));
    if (server === undefined) continue;
    throw new SessionError(
      "bad_request",
      `tool "${tool}" in config.tools is in MCP server "${server}"'s namespace (${server}${MCP_TOOL_SEPARATOR}…) and would hide ` +
        `that server's tool of the name; rename the tool so its name does not start with "${server}${MCP_TOOL_SEPARATOR}" ` +
        `(or leave it out of config.tools, or give the server in mcp_servers another name)`,
      "config.tools",
    );
  }
}
