// opencode in `bound` tool mode (../cli/bound.ts): what its server is started with, and how Brain learns that
// it left the endpoint out.
import { ENDPOINT_SERVER_NAME, type ToolEndpoint } from "../../tools/endpoint/index.js";
import { endpointNotConnected } from "../cli/bound.js";
import { boundConfigContent } from "./config-json.js";
import type { OpencodeServer } from "./server.js";

/** Bound: a project's opencode.json could grant its tools back; the plugin install goes to a dead registry. */
export function boundEnvironment(endpoint: ToolEndpoint): Record<string, string> {
  return {
    OPENCODE_CONFIG_CONTENT: boundConfigContent(endpoint.server),
    OPENCODE_DISABLE_PROJECT_CONFIG: "1",
    npm_config_registry: "http://127.0.0.1:9/",
  };
}

/** opencode's name for an endpoint tool: `<server>_<tool>`. */
export function isEndpointTool(name: string): boolean {
  return name.startsWith(`${ENDPOINT_SERVER_NAME}_`);
}

/**
 * opencode leaves out a server that failed, silently: the warning to give then (the model has no tools), or
 * undefined when the endpoint is connected.
 */
export async function endpointWarning(server: OpencodeServer): Promise<string | undefined> {
  const status = (await server.call("GET", "/mcp").catch(() => undefined)) as
    | Record<string, { status?: string }>
    | undefined;
  const state = status?.[ENDPOINT_SERVER_NAME]?.status;
  return state === "connected" ? undefined : endpointNotConnected(state);
}
