// A fallback that plays a coding agent's model for the real CLIs (Claude Code, Codex, pi, opencode, gemini), deciding
// from the request alone, never from a counter, so retries, side requests and resumed sessions all get the
// answer they would get from a real model:
//
// - a request without tools is a side request (a title): "Fake title";
// - a request whose last item is a tool result: "done";
// - "SLOW" in the user's text: 120 deltas, `slowDelayMs` apart (something to interrupt);
// - "NOTOOL" in the user's text: a plain answer, "hello from fake";
// - `CALL name {json}` in the user's text: a call of the tool `name` with those arguments, offered or not (to
//   check what a CLI does with a call of a tool it does not offer, or with bad arguments); `ns.name` calls a
//   tool in a namespace (Codex's MCP tools, on the Responses wire);
// - otherwise a call of the first shell-like tool offered, running the command in `CMD[...]` (default `ls -1`),
//   with arguments built from that tool's own JSON schema.
import { lastUserText } from "./scripts.js";
import type { FakeProviderRequest, ScriptStep } from "./types.js";

const SHELL_TOOLS = ["Bash", "bash", "exec_command", "shell", "local_shell", "run_shell_command"];

// biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON
type Json = any;

export interface ShellAgentOptions {
  slowDelayMs?: number;
}

/** The tools a request offers, by name with their parameter schemas, in any of the four wire formats. */
export function offeredTools(body: Json): { name: string; schema: Json }[] {
  // Gemini groups its declarations: tools: [{functionDeclarations: [...]}].
  const tools: Json[] = (Array.isArray(body?.tools) ? body.tools : []).flatMap((t: Json) =>
    Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : [t],
  );
  return tools
    .map((t) => ({
      name: t?.name ?? t?.function?.name ?? t?.type,
      schema: t?.input_schema ?? t?.function?.parameters ?? t?.parameters ?? t?.parametersJsonSchema ?? {},
    }))
    .filter((t) => typeof t.name === "string");
}

/** True when the conversation's last non-system item is a tool result. */
export function endsWithToolResult(body: Json): boolean {
  const items: Json[] = Array.isArray(body?.messages)
    ? body.messages
    : Array.isArray(body?.input)
      ? body.input
      : Array.isArray(body?.contents)
        ? body.contents
        : [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.role === "system" || item?.role === "developer") continue;
    if (item?.role === "tool") return true;
    if (typeof item?.type === "string" && item.type.endsWith("_output")) return true;
    if (Array.isArray(item?.content) && item.content.some((part: Json) => part?.type === "tool_result")) {
      return true;
    }
    // Gemini puts a prompt that follows tool results into the same user content, after them.
    if (Array.isArray(item?.parts)) return Boolean(item.parts.at(-1)?.functionResponse);
    return false;
  }
  return false;
}

/** Arguments for a shell tool from its schema: the command in `command`/`cmd`, a short text in other required strings. */
export function shellArguments(schema: Json, command: string): Record<string, unknown> {
  const properties: Record<string, Json> = schema?.properties ?? {};
  const required: string[] = Array.isArray(schema?.required) ? schema.required : [];
  const args: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (name === "command" || name === "cmd") {
      args[name] = property?.type === "array" ? ["bash", "-lc", command] : command;
    } else if (required.includes(name) && property?.type === "string") {
      args[name] = "run a shell command";
    }
  }
  if (Object.keys(args).length === 0) args.command = command;
  return args;
}

export function shellAgent(options: ShellAgentOptions = {}): (req: FakeProviderRequest) => ScriptStep {
  return (req) => {
    const tools = offeredTools(req.body);
    if (tools.length === 0) return { text: "Fake title" };
    if (endsWithToolResult(req.body)) return { text: "done" };
    const text = lastUserText(req);
    if (text.includes("SLOW")) {
      const ticks = Array.from({ length: 120 }, (_, i) => `tick${i} `).join("");
      return { text: ticks, chunkSize: 7, delayMs: options.slowDelayMs ?? 100 };
    }
    const forced = /CALL (\S+) (\{.*\})/s.exec(text);
    if (forced) {
      const [namespace, name] = forced[1]!.includes(".") ? forced[1]!.split(".", 2) : [undefined, forced[1]!];
      const call = { name: name!, ...(namespace ? { namespace } : {}), arguments: JSON.parse(forced[2]!) };
      return { text: "Let me call.", toolCalls: [call] };
    }
    const shell = tools.find((t) => SHELL_TOOLS.includes(t.name));
    if (text.includes("NOTOOL") || !shell) return { text: "hello from fake" };
    const command = /CMD\[(.*?)\]/.exec(text)?.[1] ?? "ls -1";
    return {
      text: "Let me look.",
      toolCalls: [{ name: shell.name, arguments: shellArguments(shell.schema, command) }],
    };
  };
}
