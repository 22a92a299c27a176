// MCP servers as session tool services: `mcpSessionTools` is the hook a Brain takes to start each session's
// `mcp_servers` and bind their tools to it as `server__tool`.
export { McpConfigError } from "./expand.js";
export { exposedName } from "./names.js";
export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_STARTUP_TIMEOUT_MS, McpServerService } from "./server.js";
export { type McpHostOptions, McpSessionServers, mcpSessionTools } from "./session-servers.js";
