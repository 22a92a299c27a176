// MCP tools join a session as `server__tool`. Providers accept tool names of letters, digits, '_' and '-' up
// to 64 characters, so anything else in a server's tool name becomes '_'. The names are not injective: within a
// server two tools can sanitise alike, and across servers `git` + `_push` and `git_` + `push` are both
// `git___push`; every name keeps its first owner and the others are reported (session-servers.ts).
import { MCP_TOOL_NAME_CHARS, MCP_TOOL_NAME_MAX, MCP_TOOL_SEPARATOR } from "../../protocol/config.js";
import type { ToolSchema } from "../../protocol/runner.js";

const UNSAFE = new RegExp(`[^${MCP_TOOL_NAME_CHARS}]`, "g");

export function exposedName(server: string, tool: string): string {
  return `${server}${MCP_TOOL_SEPARATOR}${tool.replace(UNSAFE, "_")}`.slice(0, MCP_TOOL_NAME_MAX);
}

export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface ExposedTool {
  /** The name the server knows it by. */
  original: string;
  schema: ToolSchema;
}

/**
 * The server's tools under their session names. `only` keeps just the named ones; a name that two tools would
 * share after sanitising goes to the first, and the others are reported as skipped.
 */
export function exposeTools(
  server: string,
  tools: McpToolInfo[],
  only: string[] | undefined,
): { exposed: Map<string, ExposedTool>; skipped: string[] } {
  const exposed = new Map<string, ExposedTool>();
  const skipped: string[] = [];
  for (const tool of tools) {
    if (only && !only.includes(tool.name)) continue;
    const name = exposedName(server, tool.name);
    if (exposed.has(name)) {
      skipped.push(tool.name);
      continue;
    }
    const { $schema: _dialect, ...inputSchema } = tool.inputSchema;
    exposed.set(name, {
      original: tool.name,
      schema: {
        name,
        ...(tool.description ? { description: tool.description } : {}),
        input_schema: { type: "object", ...inputSchema },
      },
    });
  }
  return { exposed, skipped };
}

/**
 * What a server's `tool.service` event says of its tools left out: `clashes` maps a session name to what has it
 * first, another server (its name) or, in a session recorded before such names were refused, a tool of
 * config.tools (BOUND_OWNER).
 */
export function shadowedMessage(clashes: ReadonlyMap<string, string>): string {
  const named = [...clashes].map(([name, owner]) =>
    owner === BOUND_OWNER ? `${name} (config.tools')` : `${name} (server "${owner}"'s)`,
  );
  return `skipped tools whose names the session has given first: ${named.join(", ")}`;
}

/** Not a server name (those hold no "__"): the owner of a name config.tools binds. */
export const BOUND_OWNER = "__config.tools";
