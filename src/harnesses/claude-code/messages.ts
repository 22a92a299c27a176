// The stream-json lines Brain writes to Claude Code's stdin: prompts, the interrupt, and its answers to the
// CLI's control requests.
import { randomUUID } from "node:crypto";
import type { PermissionVerdict } from "../../core/harness.js";
import type { ClaudeSignal } from "./parser.js";

export function userMessage(text: string, sessionId: string): unknown {
  return {
    type: "user",
    message: { role: "user", content: text },
    parent_tool_use_id: null,
    session_id: sessionId,
  };
}

export function interruptRequest(): {
  type: "control_request";
  request_id: string;
  request: { subtype: "interrupt" };
} {
  return {
    type: "control_request",
    request_id: `interrupt-${randomUUID()}`,
    request: { subtype: "interrupt" },
  };
}

/** The refusal of a control request Brain does not serve. */
export function unsupportedControl(signal: Extract<ClaudeSignal, { kind: "control-unsupported" }>): unknown {
  return {
    type: "control_response",
    response: {
      subtype: "error",
      request_id: signal.requestId,
      error: `Brain does not serve "${signal.subtype}" control requests`,
    },
  };
}

/** The answer to a `can_use_tool` request: Brain's verdict, the input unchanged when allowed. */
export function permissionResponse(
  signal: Extract<ClaudeSignal, { kind: "permission" }>,
  verdict: PermissionVerdict,
): unknown {
  const response =
    verdict.decision === "allow"
      ? { behavior: "allow", updatedInput: signal.input }
      : { behavior: "deny", message: verdict.reason ?? "denied by the session's permission policy" };
  return {
    type: "control_response",
    response: { subtype: "success", request_id: signal.requestId, response },
  };
}
