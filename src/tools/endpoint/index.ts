// Brain's bound tools as a per-session MCP server, for harnesses that speak MCP (src/tools/endpoint/endpoint.ts).
export {
  ENDPOINT_SERVER_NAME,
  openToolEndpoint,
  type StdioServerSpec,
  type ToolEndpoint,
  type ToolEndpointOptions,
} from "./endpoint.js";
export { type RunningTurnRef, sessionToolEndpoint } from "./session.js";
