// How much Brain may have written to a peer over a stream that the peer has not read yet: apart from the MCP code
// that enforces it there, so a runner's host (which keeps the same bound) loads none of MCP.

/**
 * How much Brain may have written to a peer on stdio (an MCP server's input, an agent on the tool endpoint) that the
 * peer has not read. Brain answers every request a peer sends (a ping, a sampling request it refuses, a tool call);
 * a peer that sends them without reading the answers would have them pile up in Brain's memory (a few KiB of
 * bookkeeping each, beside the bytes), so past either limit it is stopped as broken.
 */
export const UNREAD_INPUT_LIMITS = { messages: 4096, bytes: 64 * 1024 * 1024 };
