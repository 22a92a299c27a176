import { join } from "node:path";
import { ENDPOINT_SERVER_NAME, type ToolEndpoint } from "../../tools/endpoint/index.js";
import { writeAgentFileSync } from "../agent-files.js";
import { endpointNotConnected } from "../cli/bound.js";

/**
 * Bound mode, as verified in research/cli-isolation.md: only the endpoint's server (`--strict-mcp-config`, no
 * `.mcp.json`), no built-in tool (`--tools ""`; a deny-list leaves some), no settings files (their hooks run
 * shell commands), and the endpoint's tools allowed up front: Brain's policy decides each call at the endpoint.
 * The config names the secret, so it lives in the endpoint's private directory, not on the command line.
 */
export function boundArgs(endpoint: ToolEndpoint): string[] {
  const { name, ...stdio } = endpoint.server;
  const file = join(endpoint.dir, "claude-mcp.json");
  writeAgentFileSync(
    endpoint.dir,
    "claude-mcp.json",
    JSON.stringify({ mcpServers: { [name]: { type: "stdio", ...stdio } } }),
    0o600,
  );
  endpoint.hand(file);
  return [
    "--mcp-config",
    file,
    "--strict-mcp-config",
    "--setting-sources",
    "",
    "--tools",
    "",
    "--allowedTools",
    `mcp__${name}`,
  ];
}

/** Bound mode's environment: the first prompt waits for the endpoint's server to connect. */
export const BOUND_ENV = { MCP_CONNECTION_NONBLOCKING: "0" };

/**
 * Claude carries on without a server that failed to connect: its `init` line says so, and so does the warning
 * this returns (undefined for any other line, or when the endpoint is connected).
 */
export function endpointWarning(line: unknown): string | undefined {
  const init = line as {
    type?: string;
    subtype?: string;
    mcp_servers?: { name?: string; status?: string }[];
  };
  if (init?.type !== "system" || init.subtype !== "init") return undefined;
  const brain = init.mcp_servers?.find((server) => server.name === ENDPOINT_SERVER_NAME);
  return brain?.status === "connected" ? undefined : endpointNotConnected(brain?.status);
}
