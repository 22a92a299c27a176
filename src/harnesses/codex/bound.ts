// Codex in `bound` tool mode (research/cli-isolation.md): its shell, image viewer, goals, sub-agents, web search
// and plugins off, Brain's endpoint as a required MCP server whose calls need no approval (Brain's policy decides
// each at the endpoint), and a model catalog in which the model has no `apply_patch` and no deferred tool search
// (with them, Codex hides MCP tools behind `tool_search`). Left on, with no setting found: the three MCP
// resource tools (they reach only configured servers: the endpoint, which has no resources) and
// `request_user_input` (inert in app-server turns without a client that answers it).
import { mkdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { HarnessError } from "../../core/harness.js";
import type { StdioServerSpec, ToolEndpoint } from "../../tools/endpoint/index.js";
import { writeAgentFileSync } from "../agent-files.js";
import { CliProcess } from "../cli/child.js";
import type { CliProgramRun } from "../cli/harness.js";
import { tomlString } from "./config-toml.js";

/** Brain's own values, but a path may hold what JSON leaves raw and TOML refuses (see tomlString). */
const str = (value: string) => tomlString(value, "a setting of the session's tool endpoint");

/** Top-level keys of config.toml (before any table). */
export function boundTopLevel(catalog: string): string[] {
  return ['web_search = "disabled"', `model_catalog_json = ${str(catalog)}`];
}

/** Tables of config.toml. */
export function boundTables(server: StdioServerSpec): string[] {
  const env = Object.entries(server.env).map(([key, value]) => `${key} = ${str(value)}`);
  return [
    "[features]",
    "shell_tool = false",
    "view_image = false",
    "goals = false",
    "multi_agent = false",
    "plugins = false",
    "",
    `[mcp_servers.${server.name}]`,
    `command = ${str(server.command)}`,
    `args = [${server.args.map(str).join(", ")}]`,
    "required = true",
    'default_tools_approval_mode = "approve"',
    "",
    `[mcp_servers.${server.name}.env]`,
    ...env,
    "",
  ];
}

export type ProbeSpec = CliProgramRun;

/**
 * Writes a one-model catalog for `model` to `file`: Codex's own entry for it (or, for a slug it does not know,
 * its gpt-5.5 entry renamed), without apply_patch, tool search or code mode. Probed in an empty CODEX_HOME, so
 * no provider or account is asked.
 */
export async function writeBoundCatalog(
  spec: ProbeSpec,
  model: string | undefined,
  file: string,
  probeHome: string,
): Promise<void> {
  mkdirSync(probeHome, { recursive: true });
  const lines: string[] = [];
  const child = new CliProcess({
    label: "codex",
    command: spec.command,
    args: ["debug", "models"],
    env: { ...spec.env, CODEX_HOME: probeHome },
    cwd: spec.cwd,
    ...(spec.launcher ? { launcher: spec.launcher } : {}),
    onLine: (line) => lines.push(line),
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  void child.stop(60_000);
  const exit = await child.exited;
  clearTimeout(timer);
  if (exit.code !== 0) throw new HarnessError("brain_error", `codex debug models: ${child.describeExit()}`);
  let models: Record<string, unknown>[];
  try {
    models = (JSON.parse(lines.join("\n")) as { models: Record<string, unknown>[] }).models;
  } catch (err) {
    throw new HarnessError("brain_error", `codex debug models printed no catalog: ${(err as Error).message}`);
  }
  const entry = models.find((m) => m.slug === model) ?? models.find((m) => m.slug === "gpt-5.5") ?? models[0];
  if (!entry) throw new HarnessError("brain_error", "codex debug models listed no model");
  const { tool_mode: _codeMode, ...rest } = entry;
  const bound = {
    ...rest,
    slug: model ?? entry.slug,
    apply_patch_tool_type: null,
    supports_search_tool: false,
    experimental_supported_tools: [],
  };
  // The endpoint's dir is Brain's own, out of the agent's reach: only the name needs guarding.
  writeAgentFileSync(dirname(file), basename(file), JSON.stringify({ models: [bound] }));
}

/** Bound mode's config.toml parts; the model catalog goes beside the endpoint's other private files. */
export async function boundConfig(endpoint: ToolEndpoint, probe: ProbeSpec, model: string | undefined) {
  const catalog = join(endpoint.dir, "codex-models.json");
  // The probe runs as the agent's user and writes its CODEX_HOME; codex reads the catalog as that user too.
  const probeHome = join(endpoint.dir, "codex-probe");
  mkdirSync(probeHome, { recursive: true });
  endpoint.hand(probeHome);
  await writeBoundCatalog(probe, model, catalog, probeHome);
  endpoint.hand(catalog);
  return { topLevel: boundTopLevel(catalog), tables: boundTables(endpoint.server) };
}
