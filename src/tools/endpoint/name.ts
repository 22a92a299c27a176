// The endpoint's server name on its own: harness descriptors need the name at catalog time, and importing it
// from endpoint.ts would load the MCP SDK (with zod-to-json-schema and Ajv) into every CLI start.

/** The server name harnesses give the endpoint: the model sees `mcp__brain__echo` (Claude), `brain_echo`… */
export const ENDPOINT_SERVER_NAME = "brain";
