// JSON-RPC 2.0 as nui's extension hosts speak it: one JSON object per line, requests from Brain
// (`harness.info`, `harness.run`, `harness.cancel`, `harness.shutdown`), `harness.event` notifications back.
// Decoded leniently (third-party hosts): a line that is no JSON-RPC message is reported, not fatal.
import { z } from "zod";

export const JSONRPC_VERSION = "2.0";

/** Method names of seed B's extension harness protocol. */
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
} as const;

/** `harness.run` params, seed B field for field. */
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

/** `harness.info` result. nui's Python SDK sends capabilities as a list, the seed's HTTP /info as an object. */
export const HarnessInfo = z.object({
  id: z.string().optional(),
  name: z.string(),
  version: z.string().optional(),
  capabilities: z.unknown().optional(),
});
export type HarnessInfo = z.infer<typeof HarnessInfo>;

export type RpcMessage =
  | { kind: "response"; id: number | string; result?: unknown; error?: { code?: number; message: string } }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "request"; id: number | string; method: string; params: unknown };

export type DecodedRpc = { ok: true; message: RpcMessage } | { ok: false; reason: string };

const isId = (v: unknown): v is number | string => typeof v === "number" || typeof v === "string";

/** Decodes one line. Never throws. Checked by hand, not by a schema: this runs once per streamed event. */
export function decodeRpcLine(line: string): DecodedRpc {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message})` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, reason: "not a JSON-RPC message (a JSON object)" };
  }
  const obj = value as Record<string, unknown>;
  if ("method" in obj) {
    const { method, id, params } = obj;
    if (typeof method !== "string" || !method)
      return { ok: false, reason: 'a "method" must be a non-empty string' };
    if (id === undefined || id === null)
      return { ok: true, message: { kind: "notification", method, params } };
    if (!isId(id)) return { ok: false, reason: "a request id must be a number or a string" };
    return { ok: true, message: { kind: "request", id, method, params } };
  }
  if ("result" in obj || "error" in obj) {
    const { id, result, error } = obj;
    if (!isId(id)) return { ok: false, reason: "a response needs an id and a result or an error" };
    if (error === undefined || error === null) return { ok: true, message: { kind: "response", id, result } };
    const e = error as { code?: unknown; message?: unknown };
    if (typeof e !== "object" || typeof e.message !== "string") {
      return { ok: false, reason: 'a response error needs a "message"' };
    }
    const code = typeof e.code === "number" ? { code: e.code } : {};
    return { ok: true, message: { kind: "response", id, result, error: { ...code, message: e.message } } };
  }
  return { ok: false, reason: 'a JSON-RPC message has "method", "result" or "error"' };
}

export function rpcRequest(id: number, method: string, params: unknown): string {
  return `${JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, method, params })}\n`;
}

export function rpcNotification(method: string, params: unknown): string {
  return `${JSON.stringify({ jsonrpc: JSONRPC_VERSION, method, params })}\n`;
}

export function rpcError(id: number | string, code: number, message: string): string {
  return `${JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, error: { code, message } })}\n`;
}
