// JSON-RPC 2.0 as nui's extension hosts speak it: one JSON object per line, requests from Brain
// (`harness.info`, `harness.run`, `harness.cancel`, `harness.shutdown`), `harness.event` notifications back.
// Decoded leniently (third-party hosts): a line that is no JSON-RPC message is reported, not fatal.
import { z } from "zod";

/** Method names of nui's extension harness protocol (docs/protocol.md#json-rpc-over-stdio-or-tcp-extension-hosts). */
export const HARNESS_METHODS = {
  info: "harness.info",
  run: "harness.run",
  cancel: "harness.cancel",
  shutdown: "harness.shutdown",
  event: "harness.event",
  /**
   * Brain's addition: the answer to a `hitl_request` that the host raised over the protocol (not through
   * `NUI_API_URL`). A notification with `{runId, requestId, response}`; hosts that never raise such requests
   * never see it.
   */
  hitlResponse: "harness.hitl_response",
  /**
   * Brain's addition: `{token}`, the first request on a TCP connection to a host whose connection file names a
   * token (ConnectionInfo.token); such a host serves nothing else on a connection before it.
   */
  authenticate: "harness.authenticate",
} as const;

/** `harness.run` params, field for field as nui documents them. */
export const HarnessRunParams = z.object({
  message: z.string(),
  runId: z.string().min(1),
  sessionId: z.string().optional(),
  workingDir: z.string().optional(),
  systemPrompt: z.string().optional(),
  model: z.string().optional(),
  harnessId: z.string().optional(),
});
export type HarnessRunParams = z.infer<typeof HarnessRunParams>;

/**
 * POST /run's body (docs/protocol.md): `harness.run`'s params but the harness id (an HTTP host serves one
 * harness), plus the session's variables (an agent definition's `env`), as nui's HTTP client sends them.
 */
export type HttpRunBody = Omit<HarnessRunParams, "harnessId"> & { env?: Record<string, string> };

/** `harness.info` result. nui's Python SDK sends capabilities as a list, nui's HTTP /info as an object. */
export const HarnessInfo = z.object({
  id: z.string().optional(),
  name: z.string(),
  version: z.string().optional(),
  capabilities: z.unknown().optional(),
});
export type HarnessInfo = z.infer<typeof HarnessInfo>;

// Framing, decoding and the peer are JSON-RPC's own, shared with codex app-server (../jsonrpc.ts).
export { type DecodedRpc, decodeRpcLine, type RpcMessage } from "../jsonrpc.js";
