// Checks one agent definition (ADL) and says, for every problem, the field and the fix. Checks the schema
// cannot express are here: unknown keys (with the closest known one), the fields each harness type needs,
// tool approval lists, MCP server sources.

import { builtinCatalog, catalogHarnessTypes, type HarnessTypes } from "../harnesses/catalog.js";
import { urlHoldsCredentials } from "../protocol/config.js";
import {
  ADL_HARNESS_KEYS,
  ADL_IGNORED_KEYS,
  ADL_KEYS,
  ADL_VERSION,
  type AdlDefinition,
  AdlDefinition as AdlSchema,
  API_PROVIDERS,
} from "../protocol/nui/adl.js";
import { closest } from "./suggest.js";

export interface Problem {
  field: string;
  message: string;
}

export type Checked =
  | { ok: true; definition: AdlDefinition; ignored: string[] }
  | { ok: false; problems: Problem[] };

function valueAt(value: unknown, path: PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (!at || typeof at !== "object") return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

function unknownKeys(value: unknown, known: readonly string[], at: string): Problem[] {
  if (!value || typeof value !== "object" || Array.isArray(value)) return [];
  return Object.keys(value)
    .filter((key) => !known.includes(key))
    .map((key) => {
      const near = closest(key, known);
      return {
        field: at ? `${at}.${key}` : key,
        message: near
          ? `unknown field; did you mean "${near}"?`
          : `unknown field; known fields: ${known.join(", ")}`,
      };
    });
}

const FIXES: Record<string, string> = {
  adl: `write adl: "${ADL_VERSION}" at the top`,
  name: "give the agent a name: name: My Agent",
  harness: "say how it runs, e.g. harness: {type: claude-code}",
  "harness.provider": `one of ${API_PROVIDERS.join(", ")}`,
  "harness.baseUrl": "a full URL such as http://127.0.0.1:11434",
  "harness.containerPort": "the port the agent listens on inside the container, e.g. 9090",
  "harness.port": "the port the agent listens on, e.g. 9090",
  "toolApprovals.policy": "one of default, all, allowlist, denylist",
};

export interface CheckOptions {
  /** Standalone files must say `adl: "1.0"`; extension lists need not. */
  requireAdl: boolean;
  /**
   * The harness types this host runs (from the catalog of harness families): the fields each type needs, and,
   * when it knows the host's harnesses, unknown types. Default: Brain's catalog, no type refused as unknown.
   */
  types?: HarnessTypes;
}

/** `raw`: the parsed YAML/JSON. */
export function checkDefinition(raw: unknown, options: CheckOptions): Checked {
  const types = options.types ?? catalogHarnessTypes(builtinCatalog());
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    return {
      ok: false,
      problems: [{ field: "(top level)", message: "an agent definition is a mapping of fields" }],
    };
  }
  const input = { ...(raw as Record<string, unknown>) };
  if (!options.requireAdl && input.adl === undefined) input.adl = ADL_VERSION;
  const problems: Problem[] = [
    ...unknownKeys(input, ADL_KEYS, ""),
    ...unknownKeys(input.harness, ADL_HARNESS_KEYS, "harness"),
  ];
  const parsed = AdlSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path.join(".") || "(top level)";
      const example = field === "harness.type" ? `e.g. type: ${types.examples}` : FIXES[field];
      const fix = example ? `; ${example}` : "";
      if (valueAt(input, issue.path) === undefined && issue.code !== "invalid_key") {
        problems.push({ field, message: `required${fix}` });
      } else {
        // A record key's own problem (an env variable name) is nested one level down.
        const nested = issue.code === "invalid_key" ? issue.issues[0]?.message : undefined;
        problems.push({ field, message: `${nested ?? issue.message}${fix}` });
      }
    }
    return { ok: false, problems };
  }
  const def = parsed.data;
  if (def.adl !== ADL_VERSION && def.adl !== "1") {
    problems.push({
      field: "adl",
      message: `version "${def.adl}" is not supported; Brain reads adl: "${ADL_VERSION}"`,
    });
  }
  problems.push(
    ...types.check(def.harness),
    ...approvalProblems(def),
    ...mcpProblems(def),
    ...sandboxProblems(def),
    ...(def.harness.baseUrl && urlHoldsCredentials(def.harness.baseUrl)
      ? [
          {
            field: "harness.baseUrl",
            message:
              "holds a user name or password, which Brain would show wherever it shows the URL (a session's provider, a provider's error): give the URL without them, and the key in the variable apiKeyEnv names",
          },
        ]
      : []),
  );
  if (problems.length) return { ok: false, problems };
  const ignored = ADL_IGNORED_KEYS.filter((key) => def[key] !== undefined);
  if (def.aiAssets?.skills?.length) ignored.push("aiAssets.skills" as never);
  if (def.aiAssets?.rules?.length) ignored.push("aiAssets.rules" as never);
  if (def.aiAssets?.mentionProviders?.length) ignored.push("aiAssets.mentionProviders" as never);
  return { ok: true, definition: def, ignored: [...ignored] };
}

/** The harnesses `sandbox: docker` runs in a container (src/harnesses/sandbox). */
export const DOCKER_SANDBOXED = ["claude-code", "codex", "pi-cli", "opencode"];

function sandboxProblems(def: AdlDefinition): Problem[] {
  const sandbox = def.harness.sandbox;
  if (sandbox === undefined || sandbox === "none") return [];
  if (sandbox !== "docker") {
    return [
      { field: "harness.sandbox", message: `"${sandbox}" is not a sandbox Brain runs; use docker or none` },
    ];
  }
  if (DOCKER_SANDBOXED.includes(def.harness.type)) return [];
  return [
    {
      field: "harness.sandbox",
      message: `sandbox: docker runs ${DOCKER_SANDBOXED.join(", ")} in a container, not "${def.harness.type}"; for another harness use type: devcontainer with innerHarness, or drop the sandbox`,
    },
  ];
}

function approvalProblems(def: AdlDefinition): Problem[] {
  const approvals = def.toolApprovals;
  if (!approvals?.policy) return [];
  if ((approvals.policy === "allowlist" || approvals.policy === "denylist") && !approvals.tools?.length) {
    return [
      {
        field: "toolApprovals.tools",
        message: `required when policy is ${approvals.policy}; list the tool names (globs allowed), e.g. tools: [Bash, Write]`,
      },
    ];
  }
  return [];
}

function mcpProblems(def: AdlDefinition): Problem[] {
  const servers = def.aiAssets?.mcpServers ?? [];
  return servers.flatMap((server, i) => {
    const field = `aiAssets.mcpServers.${i}`;
    if (!server.ref && !server.url && !server.command) {
      return [{ field, message: "needs url (http/sse), command (stdio) or ref (ext:<extension>/<server>)" }];
    }
    if (!server.ref && !server.name)
      return [{ field: `${field}.name`, message: "required: the server's name" }];
    return [];
  });
}
