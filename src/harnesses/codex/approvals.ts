// Codex's requests to its client, answered through Brain: approvals go to the session's permission policy (by
// the tool names the model sees: `exec_command`, `apply_patch`, `request_permissions`), questions to the
// session's clients. Each answer is shaped by the installed version's generated protocol types.
import type { PermissionVerdict, ToolUse } from "../../core/harness.js";
import type { ExecCommandApprovalResponse } from "./generated/ExecCommandApprovalResponse.js";
import type { CommandExecutionRequestApprovalResponse } from "./generated/v2/CommandExecutionRequestApprovalResponse.js";
import type { FileChangeRequestApprovalResponse } from "./generated/v2/FileChangeRequestApprovalResponse.js";
import type { McpServerElicitationRequestResponse } from "./generated/v2/McpServerElicitationRequestResponse.js";
import type { PermissionsRequestApprovalResponse } from "./generated/v2/PermissionsRequestApprovalResponse.js";
import type { ToolRequestUserInputResponse } from "./generated/v2/ToolRequestUserInputResponse.js";
import type { RpcConnection } from "./rpc.js";

// biome-ignore lint/suspicious/noExplicitAny: third-party messages, decoded leniently
type Json = any;

export interface Approval {
  use: ToolUse;
  answer(verdict: PermissionVerdict): unknown;
}

const reasonOf = (params: Json) => (typeof params?.reason === "string" ? { reason: params.reason } : {});
/** The item a v2 approval is for: the id its tool.call was logged under (item/started). */
const itemOf = (params: Json) => (typeof params?.itemId === "string" ? { tool_call_id: params.itemId } : {});

/** The permission a server request asks for, or undefined when it is not an approval. */
export function approvalFor(method: string, params: Json): Approval | undefined {
  switch (method) {
    case "item/commandExecution/requestApproval":
      return {
        use: {
          tool: "exec_command",
          arguments: { command: params?.command, cwd: params?.cwd },
          ...reasonOf(params),
          ...itemOf(params),
        },
        answer: (v): CommandExecutionRequestApprovalResponse => ({
          decision: v.decision === "allow" ? "accept" : "decline",
        }),
      };
    case "item/fileChange/requestApproval":
      return {
        use: {
          tool: "apply_patch",
          arguments: { grant_root: params?.grantRoot ?? null },
          ...reasonOf(params),
          ...itemOf(params),
        },
        answer: (v): FileChangeRequestApprovalResponse => ({
          decision: v.decision === "allow" ? "accept" : "decline",
        }),
      };
    case "item/permissions/requestApproval":
      return {
        use: {
          tool: "request_permissions",
          arguments: { permissions: params?.permissions },
          ...reasonOf(params),
        },
        answer: (v): PermissionsRequestApprovalResponse => ({
          permissions:
            v.decision === "allow"
              ? {
                  ...(params?.permissions?.network ? { network: params.permissions.network } : {}),
                  ...(params?.permissions?.fileSystem ? { fileSystem: params.permissions.fileSystem } : {}),
                }
              : {},
          scope: "turn",
        }),
      };
    case "execCommandApproval":
      return {
        use: {
          tool: "exec_command",
          arguments: { command: (params?.command ?? []).join(" "), cwd: params?.cwd },
          ...reasonOf(params),
        },
        answer: (v): ExecCommandApprovalResponse => ({
          decision: v.decision === "allow" ? "approved" : { denied: { rejection: v.reason ?? "denied" } },
        }),
      };
    case "applyPatchApproval":
      return {
        use: { tool: "apply_patch", arguments: { file_changes: params?.fileChanges }, ...reasonOf(params) },
        answer: (v): ExecCommandApprovalResponse => ({
          decision: v.decision === "allow" ? "approved" : { denied: { rejection: v.reason ?? "denied" } },
        }),
      };
    case "mcpServer/elicitation/request":
      return {
        use: { tool: `mcp__${params?.serverName}__elicitation`, arguments: { message: params?.message } },
        answer: (v): McpServerElicitationRequestResponse => ({
          action: v.decision === "allow" ? "accept" : "decline",
          content: v.decision === "allow" ? {} : null,
          _meta: null,
        }),
      };
    default:
      return undefined;
  }
}

export interface QuestionSet {
  questions: { id: string; question: string; options?: string[] }[];
  answer(answers: Map<string, string>): ToolRequestUserInputResponse;
}

/** Codex's `request_user_input` tool: one Brain question per question asked. */
export function questionsFor(method: string, params: Json): QuestionSet | undefined {
  if (method !== "item/tool/requestUserInput") return undefined;
  const questions = (Array.isArray(params?.questions) ? params.questions : []).map((q: Json) => ({
    id: String(q.id),
    question: [q.header, q.question].filter(Boolean).join(": "),
    ...(Array.isArray(q.options) ? { options: q.options.map((o: Json) => String(o.label)) } : {}),
  }));
  return {
    questions,
    answer: (answers) => ({
      answers: Object.fromEntries(
        questions.map((q: { id: string }) => [q.id, { answers: [answers.get(q.id) ?? ""] }]),
      ),
    }),
  };
}

/** Who answers Codex's requests: the running turn's permission policy and its clients. */
export interface Answerers {
  permit(use: ToolUse): Promise<PermissionVerdict>;
  ask(question: { question: string; options?: string[] }): Promise<string>;
}

/** Answers one request from Codex: an approval, questions, or an error for a method Brain does not handle. */
export async function answerRequest(
  rpc: Pick<RpcConnection, "respond" | "respondError">,
  id: string | number,
  method: string,
  params: Json,
  answerers: Answerers,
): Promise<void> {
  const approval = approvalFor(method, params);
  if (approval) return rpc.respond(id, approval.answer(await answerers.permit(approval.use)));
  const questions = questionsFor(method, params);
  if (questions) {
    const answers = new Map<string, string>();
    for (const q of questions.questions) {
      const options = q.options ? { options: q.options } : {};
      answers.set(q.id, await answerers.ask({ question: q.question, ...options }));
    }
    return rpc.respond(id, questions.answer(answers));
  }
  rpc.respondError(id, -32601, `Brain does not handle "${method}"`);
}
