// A session's permission request or question, asked of the editor: a permission request (and a question with
// options) as session/request_permission, a free-text question as a form elicitation when the editor offers
// one. Withdrawn ($/cancel_request) when another client answers first.
import {
  type AgentContext,
  type ClientCapabilities,
  methods,
  type PermissionOption,
} from "@agentclientprotocol/sdk";
import type { AnswerBody } from "../protocol/api.js";
import type { SessionEvent } from "../protocol/events.js";

type Request = Extract<SessionEvent, { type: "permission.requested" | "question.requested" }>;

export interface AskOptions {
  capabilities: ClientCapabilities;
  signal: AbortSignal;
  /** The tool call the permission is for, when the harness reported one. */
  toolCallId?: string | undefined;
}

/** The editor's answer, or undefined when it cannot be asked or the question was withdrawn. */
export async function askEditor(
  editor: AgentContext,
  sessionId: string,
  request: Request,
  options: AskOptions,
) {
  try {
    return await ask(editor, sessionId, request, options);
  } catch {
    return undefined; // withdrawn, or the editor refused or went away: other clients may still answer
  }
}

async function ask(
  editor: AgentContext,
  sessionId: string,
  request: Request,
  { capabilities, signal, toolCallId }: AskOptions,
): Promise<AnswerBody | undefined> {
  const send = { cancellationSignal: signal, stopWaitingOnCancel: true };
  if (request.type === "permission.requested") {
    const { outcome } = await editor.request(
      methods.client.session.requestPermission,
      {
        sessionId,
        toolCall: {
          toolCallId: toolCallId || request.data.id,
          title: request.data.reason ?? `Allow ${request.data.tool}?`,
          kind: "other",
          status: "pending",
          rawInput: request.data.arguments ?? {},
        },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "deny", name: "Deny", kind: "reject_once" },
        ],
      },
      send,
    );
    if (outcome.outcome === "cancelled") return { decision: "deny", reason: "cancelled in the editor" };
    if (outcome.optionId === "allow") return { decision: "allow", reason: "allowed in the editor" };
    if (outcome.optionId === "deny") return { decision: "deny", reason: "denied in the editor" };
    return { decision: "deny", reason: notOffered(outcome.optionId) };
  }
  const choices = request.data.options ?? [];
  if (choices.length > 0) {
    const offered: PermissionOption[] = [
      ...choices.map((name, i) => ({ optionId: `option-${i}`, name, kind: "allow_once" as const })),
      { optionId: "skip", name: "Skip", kind: "reject_once" },
    ];
    const { outcome } = await editor.request(
      methods.client.session.requestPermission,
      {
        sessionId,
        toolCall: {
          toolCallId: request.data.id,
          title: request.data.question,
          kind: "other",
          status: "pending",
        },
        options: offered,
      },
      send,
    );
    if (outcome.outcome === "cancelled" || outcome.optionId === "skip") {
      return { answer: "", reason: "skipped in the editor" };
    }
    // Only an id it was offered: a prefix cut off any other id ("allow", "bogus") read as option 0.
    const picked = offered.findIndex((option) => option.optionId === outcome.optionId);
    const answer = choices[picked];
    return answer === undefined ? { answer: "", reason: notOffered(outcome.optionId) } : { answer };
  }
  if (!capabilities.elicitation?.form) return undefined;
  const reply = await editor.request(
    methods.client.elicitation.create,
    {
      sessionId,
      mode: "form",
      message: request.data.question,
      requestedSchema: {
        type: "object",
        properties: { answer: { type: "string", title: request.data.question } },
        required: ["answer"],
      },
    },
    send,
  );
  if (reply.action !== "accept") return { answer: "", reason: `${reply.action} in the editor` };
  const content = (reply as { content?: Record<string, unknown> | null }).content;
  return { answer: String(content?.answer ?? "") };
}

/** An editor's pick of an option it was not offered: answered as no choice, and said so in the log. */
function notOffered(optionId: string): string {
  return `the editor picked an option it was not offered (${JSON.stringify(optionId.slice(0, 100))})`;
}
