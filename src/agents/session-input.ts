// An agent definition as a Brain session: the harness its `harness.type` names, the model and system prompt,
// the harness's settings in `config.options` (where each family reads them), the provider for `api`, and
// `toolApprovals` as the session's permission policy.
import type { NewSessionInput } from "../core/brain.js";
import { DEFAULT_API_KEY_ENV } from "../protocol/nui/adl.js";
import type { PermissionPolicy } from "../protocol/permissions.js";
import type { Agent } from "./catalog.js";

/**
 * nui's toolApprovals as Brain's policy. nui prompts for every tool by default; Brain allows bound tools by
 * default (binding is the decision), so an omitted toolApprovals keeps Brain's default and an explicit
 * `policy: default` asks for every tool.
 */
export function permissionPolicy(
  approvals: Agent["definition"]["toolApprovals"],
): PermissionPolicy | undefined {
  if (!approvals?.policy) return undefined;
  const listed = (decision: "allow" | "ask") =>
    Object.fromEntries((approvals.tools ?? []).map((tool) => [tool, decision]));
  switch (approvals.policy) {
    case "all":
      return { default: "allow" };
    case "allowlist":
      return { default: "ask", tools: listed("allow") };
    case "denylist":
      return { default: "allow", tools: listed("ask") };
    case "default":
      return { default: "ask" };
  }
}

export function sessionInput(agent: Agent, context: { workingDir?: string } = {}): NewSessionInput {
  const def = agent.definition;
  const h = def.harness;
  const env = { ...def.env, ...h.env };
  const options: Record<string, unknown> = { agent: agent.id };
  if (Object.keys(env).length) options.env = env;
  if (context.workingDir) options.working_dir = context.workingDir;
  for (const key of [
    "provider",
    "baseUrl",
    "innerHarness",
    "image",
    "containerPort",
    "host",
    "port",
    "permissions",
    "disableTools",
    "sandbox",
    "lifecycleTimeout",
    "remoteUser",
    "network",
  ] as const) {
    if (h[key] !== undefined) options[key] = h[key];
  }
  if (def.aiAssets?.mcpServers?.length) options.mcp_servers = def.aiAssets.mcpServers;
  const policy = permissionPolicy(def.toolApprovals);
  const input: NewSessionInput = {
    harness: h.type,
    config: {
      ...(h.model ? { model: h.model } : {}),
      ...(def.systemPrompt ? { system_prompt: def.systemPrompt } : {}),
      options,
    },
    ...(policy ? { permissions: policy } : {}),
  };
  if (h.type === "api" && h.provider) {
    const keyEnv = h.apiKeyEnv ?? DEFAULT_API_KEY_ENV[h.provider];
    input.provider = {
      api: h.provider,
      ...(h.baseUrl ? { base_url: h.baseUrl } : {}),
      ...(keyEnv ? { api_key_env: keyEnv } : {}),
    };
  }
  return input;
}
