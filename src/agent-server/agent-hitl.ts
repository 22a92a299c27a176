// How the CLI agent server answers the CLI's permission requests and questions: the operator's BRAIN_AGENT_TOOLS
// when set, else nui's HITL through NUI_API_URL (the SDK's create-then-wait; the `docker` harness serves a
// --network none container a NUI_API_URL of its session's own), else nobody can answer: the tool is denied and
// the question gets "". NUI_API_URL holds a secret, so a failed request's message never carries it.
import type { RunContext } from "../../sdk/ts/nui/index.js";
import type { PermissionVerdict, ToolUse } from "../core/harness.js";
import type { Question } from "../protocol/events.js";

/**
 * The operator's answer to every tool the CLI runs, set on the container (never by a run): "allow" or "deny".
 * Unset, each permission the CLI asks for goes to a person through nui's HITL.
 */
export const TOOLS_ENV = "BRAIN_AGENT_TOOLS";

export function toolsPolicy(env: NodeJS.ProcessEnv = process.env): "allow" | "deny" | undefined {
  const value = env[TOOLS_ENV];
  if (value === undefined || value === "") return undefined;
  if (value === "allow" || value === "deny") return value;
  throw new Error(
    `${TOOLS_ENV} must be "allow" or "deny" (or unset, to ask through nui's HITL), got "${value}"`,
  );
}

/** `message` with the value of NUI_API_URL (and its origin, which the SDK's errors may show) named instead. */
export function withoutApiUrl(message: string, env: NodeJS.ProcessEnv = process.env): string {
  const url = (env.NUI_API_URL ?? "").trim().replace(/\/+$/, "");
  if (!url) return message;
  return message.split(url).join("NUI_API_URL");
}

/** The HITL call, its failure's message cleaned of the secret URL. */
async function viaNui<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new Error(withoutApiUrl((err as Error).message));
  }
}

export async function permitThroughNui(
  ctx: RunContext | undefined,
  use: ToolUse,
  tools: "allow" | "deny" | undefined,
): Promise<PermissionVerdict> {
  if (tools) return tools === "allow" ? { decision: "allow" } : { decision: "deny", reason: TOOLS_ENV };
  if (!ctx || !process.env.NUI_API_URL) {
    return { decision: "deny", reason: "no NUI_API_URL: nobody can answer a permission request" };
  }
  const answer = await viaNui(() =>
    ctx.requestApproval({
      title: `Allow ${use.tool}?`,
      toolName: use.tool,
      toolInput: use.arguments ?? {},
      ...(use.reason ? { description: use.reason } : {}),
    }),
  );
  // Only a clear yes allows, as Brain reads nui's envelope (server/hitl/envelopes.ts): "answered" whose answers
  // say no (approved: false, decision: "deny"), or say something else there, is a no.
  if (answer.status !== "answered") return { decision: "deny", reason: answer.status };
  const said = answer.answers ?? {};
  const approved = said.approved === undefined || said.approved === true;
  const decided = said.decision === undefined || said.decision === "allow";
  if (approved && decided) return { decision: "allow" };
  const note = typeof said.message === "string" && said.message ? said.message : "declined";
  return { decision: "deny", reason: note };
}

export async function askThroughNui(ctx: RunContext | undefined, question: Question): Promise<string> {
  if (!ctx || !process.env.NUI_API_URL) return "";
  const answer = await viaNui(() =>
    ctx.askUser({
      ...(question.title ? { title: question.title } : {}),
      message: question.message ?? question.question,
      questions: [
        {
          question: question.question,
          ...(question.header ? { header: question.header } : {}),
          ...(question.options
            ? {
                options: question.options.map((label) => ({
                  label,
                  ...(question.option_descriptions?.[label]
                    ? { description: question.option_descriptions[label] }
                    : {}),
                })),
              }
            : {}),
        },
      ],
    }),
  );
  // Only an answered request carries the person's answer: a declined, cancelled or expired one carries why
  // (answers.reason or answers.message), which the CLI would take for what the person said.
  if (answer.status !== "answered") return "";
  const first = Object.values(answer.answers ?? {})[0];
  return typeof first === "string" ? first : first === undefined ? "" : JSON.stringify(first);
}
