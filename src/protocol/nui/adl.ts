// nui's Agent Definition Language (ADL): one agent per YAML or JSON file (`adl: "1.0"`), or a list under
// `agents:` in an extension. Every field nui defines is known here, so a real nui definition loads unchanged;
// Brain runs the single-agent part (harness, prompt, env, tool approvals, MCP servers) and names what it
// ignores (multi-step orchestration, evals, skills, ...). A key nui does not define is an error, with the
// closest known key as the fix: a typo must not silently change what an agent does.
import { z } from "zod";

export const ADL_VERSION = "1.0";

/** Built-in CLI harness types nui knows (Brain runs them through its own adapters of those names). */
export const CLI_HARNESS_TYPES = ["claude-code", "pi", "codex", "opencode", "antigravity"] as const;
export const API_PROVIDERS = ["anthropic", "openai", "gemini", "openrouter", "ollama"] as const;
export const TOOL_APPROVAL_POLICIES = ["default", "all", "allowlist", "denylist"] as const;

/** The variable an `api` harness reads its key from when `apiKeyEnv` is not given (nui's defaults). */
export const DEFAULT_API_KEY_ENV: Record<(typeof API_PROVIDERS)[number], string | undefined> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  gemini: "GEMINI_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  ollama: undefined,
};

/** Scalars YAML reads as numbers or booleans are what the author meant as text (`PORT: 8080`). */
const Text = z.union([z.string(), z.number(), z.boolean()]).transform((v) => String(v));
const EnvMap = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "not a valid variable name"), Text);
const Port = z.number().int().min(1).max(65535);

export const ADL_HARNESS_KEYS = [
  "type",
  "provider",
  "model",
  "baseUrl",
  "apiKeyEnv",
  "innerHarness",
  "sandbox",
  "image",
  "containerPort",
  "host",
  "port",
  "env",
  "permissions",
  "disableTools",
  "lifecycleTimeout",
  "remoteUser",
  "network",
] as const;

export const AdlHarness = z.object({
  type: z.string().min(1),
  provider: z.enum(API_PROVIDERS).optional(),
  model: Text.optional(),
  baseUrl: z.url().optional(),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "not a valid variable name")
    .optional(),
  innerHarness: z.string().min(1).optional(),
  sandbox: z.string().optional(),
  image: z.string().min(1).optional(),
  containerPort: Port.optional(),
  host: z.string().min(1).optional(),
  port: Port.optional(),
  env: EnvMap.optional(),
  permissions: z.enum(["interactive", "bypass"]).optional(),
  disableTools: z.boolean().optional(),
  /** Brain's: seconds each lifecycle command of a devcontainer's image may run (`devcontainer up`). */
  lifecycleTimeout: z.number().positive().optional(),
  /** Brain's, for a devcontainer: the image's user its commands run as, and its network. */
  remoteUser: z.string().min(1).optional(),
  network: z.enum(["none", "bridge"]).optional(),
});
export type AdlHarness = z.infer<typeof AdlHarness>;

export const AdlMcpServer = z.object({
  name: z.string().optional(),
  ref: z.string().optional(),
  url: z.string().optional(),
  command: z.string().optional(),
  args: z.array(Text).optional(),
  type: z.enum(["http", "sse", "stdio"]).optional(),
  env: EnvMap.optional(),
  headers: z.record(z.string(), Text).optional(),
  auth: z.record(z.string(), z.unknown()).optional(),
});
export type AdlMcpServer = z.infer<typeof AdlMcpServer>;

/** Fields nui defines that Brain accepts but does not act on (yet): `brain agents` names them. */
export const ADL_IGNORED_KEYS = [
  "kind",
  "tags",
  "allowedHarnesses",
  "skill",
  "promptMode",
  "defaultPrompt",
  "promptSuggestions",
  "workingDirInput",
  "hitl",
  "evals",
  "orchestration",
  "council",
  "steps",
  "subAgents",
  "internal",
] as const;

/** Every field of an ADL file: the ones Brain acts on, then the ignored ones. */
export const ADL_KEYS = [
  "adl",
  "id",
  "name",
  "description",
  "version",
  "harness",
  "systemPrompt",
  "aiAssets",
  "env",
  "toolApprovals",
  ...ADL_IGNORED_KEYS,
] as const;

export const AdlDefinition = z.object({
  adl: Text,
  kind: z.string().optional(),
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "letters, digits, '.', '_' or '-'")
    .optional(),
  name: Text,
  description: Text.optional(),
  tags: z.array(Text).optional(),
  version: Text.optional(),
  harness: AdlHarness,
  allowedHarnesses: z.array(z.string()).optional(),
  systemPrompt: z.string().optional(),
  skill: z.string().optional(),
  aiAssets: z
    .object({
      mcpServers: z.array(AdlMcpServer).optional(),
      skills: z.array(z.unknown()).optional(),
      rules: z.array(z.unknown()).optional(),
      mentionProviders: z.array(z.unknown()).optional(),
    })
    .optional(),
  env: EnvMap.optional(),
  promptMode: z.string().optional(),
  defaultPrompt: z.string().optional(),
  promptSuggestions: z.array(z.unknown()).optional(),
  workingDirInput: z.boolean().optional(),
  hitl: z.record(z.string(), z.unknown()).optional(),
  toolApprovals: z
    .object({ policy: z.enum(TOOL_APPROVAL_POLICIES).optional(), tools: z.array(z.string()).optional() })
    .optional(),
  evals: z.array(z.unknown()).optional(),
  orchestration: z.record(z.string(), z.unknown()).optional(),
  council: z.unknown().optional(),
  steps: z.array(z.unknown()).optional(),
  subAgents: z.array(z.unknown()).optional(),
  internal: z.boolean().optional(),
});
export type AdlDefinition = z.infer<typeof AdlDefinition>;
