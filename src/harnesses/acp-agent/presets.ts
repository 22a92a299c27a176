// The three ACP agents Brain knows by name: how each is pointed at the session's provider with its state under
// the native dir, and its faults worked around (verified facts: shared/research/acp-agents.md).
import { dirname, join } from "node:path";
import { HarnessError } from "../../core/harness.js";
import { ENDPOINT_SERVER_NAME } from "../../tools/endpoint/name.js";
import { makeAgentDirSync, writeAgentFileSync } from "../agent-files.js";
import { askSettings, claudeToolRules } from "../claude-code/policy.js";
import { placeTranscript, transcriptPath, transcriptTail } from "../claude-code/transcripts.js";
import { listNativeFiles } from "../cli/files.js";
import { anthropicBaseUrl, ownVendorWire, refuseKeyWithoutVendor } from "../cli/provider-api.js";
import { proxyVariable } from "../cli/proxy-variable.js";
import { codexConfigToml, keyEnvironment } from "../codex/config-toml.js";
import { relocateRollouts, rolloutCwd, rolloutsOf } from "../codex/relocate.js";
import { placeGeminiChat } from "./gemini-chats.js";
import type { AcpAgentContext, AcpProfile } from "./profile.js";

export type PresetName = "claude" | "codex" | "gemini";

export interface AcpPreset {
  /** Harness `acp:<name>`. */
  name: PresetName;
  title: string;
  program: string;
  npmPackage: string;
  profile: AcpProfile;
}

/** The agent's config dir under the native dir, created (never through a link the agent put there). */
function home(ctx: AcpAgentContext, name: string): string {
  makeAgentDirSync(ctx.dir, name, ctx.owner);
  return join(ctx.dir, name);
}

/** Session files only grow; nothing else the agents write (settings, caches, sqlite indexes) is needed to load one. */
const appendOnly = (dir: string, sub: string, pattern: RegExp) =>
  listNativeFiles(dir, sub, { include: (path) => pattern.test(path), appendOnly: () => true });

export const CLAUDE_DIR = "claude";

/** Whether the transcript ends at a record boundary with an assistant record whose text is `text`. */
async function endsWithAnswer(file: string, text: string): Promise<boolean> {
  try {
    const lines = (await transcriptTail(file))?.split("\n") ?? [];
    if (lines.pop() !== "") return false;
    const last = lines.reverse().find((line) => line.includes('"type":"assistant"'));
    const content = last ? JSON.parse(last)?.message?.content : undefined;
    return Array.isArray(content) && content.some((part) => part?.type === "text" && part.text === text);
  } catch {
    return false;
  }
}

const claude: AcpProfile = {
  check: (ctx) => void ownVendorWire(ctx.family, ctx.provider, { speaks: ["messages"], openai: "chat" }),
  prepare: async (ctx, services) => {
    const { base_url } = ctx.provider;
    const provider = await services.provider("messages", base_url ? anthropicBaseUrl(base_url) : undefined);
    return {
      CLAUDE_CONFIG_DIR: home(ctx, CLAUDE_DIR),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      // The SDK always passes --allow-dangerously-skip-permissions, which Claude Code refuses as root unless told
      // it runs in a sandbox; permissions still go through session/request_permission.
      ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
      ...(ctx.config.model ? { ANTHROPIC_MODEL: ctx.config.model } : {}),
      ...(provider.base_url ? { ANTHROPIC_BASE_URL: provider.base_url } : {}),
      ...(provider.api_key ? { ANTHROPIC_API_KEY: provider.api_key } : {}),
      ...proxyVariable(provider),
    };
  },
  sessionMeta: ({ config, endpoint, policy }) => {
    // Native: the policy given up front too, as the claude-code family does (../claude-code/policy.ts), since
    // Claude Code runs its read-only tools without a session/request_permission.
    const rules = endpoint ? undefined : claudeToolRules(policy);
    const options = {
      ...(config.model ? { model: config.model } : {}),
      ...(rules?.tools ? { tools: rules.tools } : {}),
      ...(rules?.disallowed.length ? { disallowedTools: rules.disallowed } : {}),
      ...(rules?.ask.length ? { extraArgs: { settings: askSettings(rules.ask) } } : {}),
    };
    const meta = Object.keys(options).length > 0 ? { claudeCode: { options } } : {};
    const prompt = config.system_prompt ? { systemPrompt: { append: config.system_prompt } } : {};
    // Bound: none of Claude Code's own tools, only the MCP servers session/new names (the endpoint).
    const bound = endpoint ? { disableBuiltInTools: true } : {};
    return { ...meta, ...prompt, ...bound };
  },
  // Claude files a session under a folder named after its cwd, and loads it only from there.
  place: (ctx, sessionId) =>
    placeTranscript(ctx.dir, join(ctx.dir, CLAUDE_DIR), ctx.cwd, sessionId, ctx.owner),
  written: (ctx, sessionId, lastText) =>
    endsWithAnswer(transcriptPath(join(ctx.dir, CLAUDE_DIR), ctx.cwd, sessionId), lastText),
  files: (dir) => appendOnly(dir, `${CLAUDE_DIR}/projects`, /\.jsonl$/),
  restartAfterCancel: true,
  // A permission request carries no _meta, only a kind and a title, and can come before the call's tool_call
  // update: judged by its kind ("execute", "other"), a tool escaped every rule naming it (an ask on Bash allowed
  // unasked). claude-agent-acp titles each tool of kind "other" (MCP tools, tools it does not know) by its name,
  // and gives the kinds below to one tool each, or to two told apart by how it starts their titles (its
  // tools.js: edit "Write …"/"Edit …", search "grep …"/"Find …", fetch "Fetch …"/a quoted query); what follows
  // is display text (a command, a path, a pattern) the model chose. "think" (Task or TodoWrite) is left as the
  // kind on purpose: a Task's title is its model-written description, so no start of it tells the two apart.
  toolName: (update) => {
    const { kind, title } = (update ?? {}) as { kind?: unknown; title?: unknown };
    if (typeof title !== "string") return undefined;
    if (kind === "other") return title || undefined;
    const byTitle = TITLED_KINDS[String(kind)]?.find(([start]) => start.test(title));
    if (byTitle) return byTitle[1];
    return ({ execute: "Bash", read: "Read", switch_mode: "ExitPlanMode" } as Record<string, string>)[
      String(kind)
    ];
  },
  endpointTool: (name) => name.startsWith(`mcp__${ENDPOINT_SERVER_NAME}__`),
};

/** claude-agent-acp's kinds it gives to two tools, each told by how the adapter starts its title. */
const TITLED_KINDS: Record<string, [RegExp, string][]> = {
  edit: [
    [/^Write\b/, "Write"],
    [/^Edit\b/, "Edit"],
  ],
  search: [
    [/^grep\b/, "Grep"],
    [/^Find\b/, "Glob"],
  ],
  fetch: [
    [/^Fetch\b/, "WebFetch"],
    [/^"/, "WebSearch"],
  ],
};

export const CODEX_DIR = "codex";

/**
 * Bound mode (shared/research/acp-agents.md): codex's shell, sub-agents, goals and web search off; the endpoint
 * comes in session/new. Left on, with no switch found: its MCP resource tools, update_plan, request_user_input,
 * view_image and apply_patch (the codex family removes the last through a model catalog, which codex-acp's
 * bundled codex has no `debug models` to probe for).
 */
const CODEX_BOUND = {
  topLevel: ['web_search = "disabled"'],
  tables: [
    "[features]",
    "shell_tool = false",
    "unified_exec = false",
    "multi_agent = false",
    "goals = false",
    "",
  ],
};

const codex: AcpProfile = {
  check: (ctx) =>
    void ownVendorWire(ctx.family, ctx.provider, { speaks: ["responses"], openai: "responses" }),
  prepare: async (ctx, services) => {
    const dir = home(ctx, CODEX_DIR);
    const provider = await services.provider("responses", ctx.provider.base_url);
    // Codex asks before anything it does not consider safe, and Brain's policy decides. Its sandbox is off:
    // bubblewrap is not always there, and Codex will not set up its helper under /tmp.
    const policy = ['approval_policy = "untrusted"', 'sandbox_mode = "danger-full-access"'];
    const toml = codexConfigToml(ctx.config, provider, ctx.endpoint ? CODEX_BOUND : undefined).split("\n");
    const config = [toml[0], ...policy, ...toml.slice(1)].join("\n");
    writeAgentFileSync(ctx.dir, join(dir, "config.toml"), config, undefined, ctx.owner);
    return { CODEX_HOME: dir, ...keyEnvironment(provider), ...proxyVariable(provider) };
  },
  // A thread restored into another native dir names the old cwd and CODEX_HOME; codex-acp's codex would tell the
  // model its context again (src/harnesses/codex/relocate.ts says why). The old home is found beside the old
  // cwd when that was the default `<native>/work`; an explicit cwd keeps the old home's paths as they were.
  place: (ctx, sessionId) => {
    const home = join(ctx.dir, CODEX_DIR);
    const files = rolloutsOf(home, sessionId);
    const was = files[0] ? rolloutCwd(ctx.dir, files[0]) : undefined;
    if (!was) return true;
    const oldHome = was.endsWith("/work") ? join(dirname(was), CODEX_DIR) : "";
    relocateRollouts(ctx.dir, files, [
      { from: oldHome, to: home },
      { from: was, to: ctx.cwd },
    ]);
    return true;
  },
  // Codex's tools by the names its model sees: a command (whatever kind codex-acp gives it) is exec_command; an
  // MCP call (which codex-acp sends with no kind, its input `{server, tool, arguments}`) is the codex family's
  // `mcp__<server>__<tool>`.
  toolName: (update) => {
    const u = update as {
      rawInput?: { command?: unknown; server?: unknown; tool?: unknown };
      kind?: string;
      content?: { type?: string }[];
    };
    const { server, tool } = u?.rawInput ?? {};
    if (typeof server === "string" && typeof tool === "string") return `mcp__${server}__${tool}`;
    if (u?.rawInput?.command !== undefined) return "exec_command";
    if (u?.kind === "edit" || u?.content?.some?.((c) => c?.type === "diff")) return "apply_patch";
    return undefined;
  },
  // codex-acp tags the errors of a model turn with codex's own classification; only the sandbox's is not the model's.
  providerFailure: (data) => {
    const info = (data as { codex_error_info?: unknown } | undefined)?.codex_error_info;
    return info === undefined ? undefined : info !== "sandbox_error";
  },
  files: (dir) => appendOnly(dir, `${CODEX_DIR}/sessions`, /\/rollout-[^/]+\.jsonl$/),
  endpointTool: (name) => name.startsWith(`mcp__${ENDPOINT_SERVER_NAME}__`),
};

export const GEMINI_DIR = "gemini";
/** gemini's `auto` model asks a classifier model before every turn; a fixed model makes one request a turn. */
export const GEMINI_DEFAULT_MODEL = "gemini-2.5-flash";
const GEMINI_APIS = ["gemini", "google", "google-gemini"];

/**
 * Bound mode: gemini-cli 0.61's own tools by name (its bundle's `*_TOOL_NAME`s), in settings' `tools.exclude`
 * (`tools.core: []` would take the MCP tools away too: shared/research/acp-agents.md).
 */
const GEMINI_BUILTINS = [
  "activate_skill",
  "ask_user",
  "complete_task",
  "enter_plan_mode",
  "exit_plan_mode",
  "get_internal_docs",
  "glob",
  "google_web_search",
  "grep_search",
  "invoke_agent",
  "list_directory",
  "list_mcp_resources",
  "read_file",
  "read_many_files",
  "read_mcp_resource",
  "replace",
  "run_shell_command",
  "save_memory",
  "take_snapshot",
  "tracker_add_dependency",
  "tracker_create_task",
  "tracker_get_task",
  "tracker_list_tasks",
  "tracker_update_task",
  "tracker_visualize",
  "update_topic",
  "web_fetch",
  "write_file",
  "write_todos",
];

const gemini: AcpProfile = {
  check: (ctx) => {
    refuseKeyWithoutVendor(ctx.family, ctx.provider);
    const api = ctx.provider.api;
    if (api === undefined || GEMINI_APIS.includes(api)) return;
    throw new HarnessError(
      "brain_error",
      `${ctx.family.harness}: ${ctx.family.title} speaks only the Gemini API, but the provider's api is "${api}"; ` +
        `use "gemini" (or leave it out) with a Gemini-compatible base_url`,
    );
  },
  args: () => ["--acp"],
  prepare: async (ctx, services) => {
    const dir = home(ctx, GEMINI_DIR);
    const settingsDir = join(dir, ".gemini");
    const settings = {
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      ...(ctx.endpoint ? { tools: { exclude: GEMINI_BUILTINS } } : {}),
    };
    const json = `${JSON.stringify(settings, null, 2)}\n`;
    writeAgentFileSync(ctx.dir, join(settingsDir, "settings.json"), json, undefined, ctx.owner);
    const base_url = ctx.provider.base_url?.replace(/\/+$/, "");
    const provider = await services.provider("gemini", base_url);
    return {
      GEMINI_CLI_HOME: dir,
      // One process, not a relaunched second one; MCP servers connect only in a trusted folder.
      GEMINI_CLI_NO_RELAUNCH: "true",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_MODEL: ctx.config.model ?? GEMINI_DEFAULT_MODEL,
      ...(provider.base_url ? { GOOGLE_GEMINI_BASE_URL: provider.base_url } : {}),
      ...(provider.api_key ? { GEMINI_API_KEY: provider.api_key } : {}),
      ...proxyVariable(provider),
    };
  },
  // Its ACP mode names a call only in its id (`run_shell_command__run_shell_command_<ms>_0`) and shows no
  // arguments, only a title: for its shell, the command.
  toolName: (update) => {
    const id = (update as { toolCallId?: unknown })?.toolCallId;
    const match = typeof id === "string" ? /^([A-Za-z0-9_.-]+?)__/.exec(id) : null;
    return match?.[1];
  },
  toolArguments: (update) => {
    const { kind, title } = (update ?? {}) as { kind?: unknown; title?: unknown };
    if (typeof title !== "string" || title === "") return undefined;
    return kind === "execute" ? { command: title } : { title };
  },
  replayTrailsLoad: true,
  place: (ctx, sessionId) =>
    placeGeminiChat(ctx.dir, join(ctx.dir, GEMINI_DIR, ".gemini"), ctx.cwd, sessionId, ctx.owner),
  files: (dir) => appendOnly(dir, `${GEMINI_DIR}/.gemini/tmp`, /\/chats\/[^/]+\.jsonl?$/),
  // Its MCP tools are `mcp_<server>_<tool>` (the prefix of their call ids, as toolName reads them).
  endpointTool: (name) => name.startsWith(`mcp_${ENDPOINT_SERVER_NAME}_`),
};

export const PRESETS: readonly AcpPreset[] = [
  {
    name: "claude",
    title: "Claude Agent (ACP)",
    program: "claude-agent-acp",
    npmPackage: "@zed-industries/claude-agent-acp",
    profile: claude,
  },
  {
    name: "codex",
    title: "Codex (ACP)",
    program: "codex-acp",
    npmPackage: "@zed-industries/codex-acp",
    profile: codex,
  },
  {
    name: "gemini",
    title: "Gemini CLI (ACP)",
    program: "gemini",
    npmPackage: "@google/gemini-cli",
    profile: gemini,
  },
];
