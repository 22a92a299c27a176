// Where agent definitions come from: `brain run --agent FILE` (any path), `$BRAIN_HOME/agents/*.yaml|yml|json`
// (one agent per file, id from its `id` or the file name), and installed extensions' `agents` lists (ids
// namespaced `ext:<extension>/<id>`). Every problem names the file, the field and the fix.
import { existsSync, readdirSync } from "node:fs";
import { basename, extname, join } from "node:path";
import type { HarnessTypes } from "../harnesses/catalog.js";
import type { InstalledExtension } from "../harnesses/ext/extensions.js";
import { readStructured } from "../harnesses/ext/extensions.js";
import type { AdlDefinition } from "../protocol/nui/adl.js";
import { checkDefinition, type Problem } from "./validate.js";

export const AGENT_EXTENSIONS = [".yaml", ".yml", ".json"];

export interface Agent {
  id: string;
  /** The file it was read from. */
  file: string;
  definition: AdlDefinition;
  /** Fields Brain accepts but does not act on. */
  ignored: string[];
  /** The extension it came with, if any. */
  extension?: string;
}

export class AgentError extends Error {
  override name = "AgentError";
}

function describe(file: string, problems: Problem[], at = ""): string {
  const where = at ? `${file} (${at})` : file;
  return `${where}: ${problems.map((p) => `${p.field}: ${p.message}`).join("; ")}`;
}

function idFromFile(file: string): string {
  return basename(file, extname(file));
}

/** One agent from a YAML or JSON file. */
export function loadAgentFile(file: string, types?: HarnessTypes): Agent {
  if (!existsSync(file)) throw new AgentError(`${file}: no such agent definition file`);
  if (!AGENT_EXTENSIONS.includes(extname(file).toLowerCase())) {
    throw new AgentError(`${file}: an agent definition is a .yaml, .yml or .json file`);
  }
  let raw: unknown;
  try {
    raw = readStructured(file);
  } catch (err) {
    throw new AgentError((err as Error).message);
  }
  const checked = checkDefinition(raw, { requireAdl: true, ...(types ? { types } : {}) });
  if (!checked.ok) throw new AgentError(describe(file, checked.problems));
  return {
    id: checked.definition.id ?? idFromFile(file),
    file,
    definition: checked.definition,
    ignored: checked.ignored,
  };
}

/** What a catalog holds: its agents, its problems, and the problem of each broken agent whose id is known. */
interface Catalog {
  agents: Agent[];
  problems: string[];
  broken: Map<string, string>;
}

/** The agents an extension contributes, as `ext:<extension>/<id>`. */
export function extensionAgents(extension: InstalledExtension, types?: HarnessTypes): Catalog {
  const agents: Agent[] = [];
  const problems: string[] = [];
  const broken = new Map<string, string>();
  for (const [i, raw] of extension.agents.definitions.entries()) {
    const checked = checkDefinition(raw, { requireAdl: false, ...(types ? { types } : {}) });
    if (!checked.ok) {
      const problem = describe(extension.agents.file, checked.problems, `agents.${i}`);
      problems.push(problem);
      const id = (raw as { id?: unknown } | null)?.id;
      if (typeof id === "string") broken.set(`ext:${extension.name}/${id}`, problem);
      continue;
    }
    if (!checked.definition.id) {
      problems.push(`${extension.agents.file} (agents.${i}): id: required in an extension's agent list`);
      continue;
    }
    agents.push({
      id: `ext:${extension.name}/${checked.definition.id}`,
      file: extension.agents.file,
      definition: checked.definition,
      ignored: checked.ignored,
      extension: extension.name,
    });
  }
  return { agents, problems, broken };
}

/** Every agent in `dir` and in the extensions; broken ones are reported in `problems`. */
export function listAgents(
  dir: string,
  extensions: InstalledExtension[] = [],
  types?: HarnessTypes,
): { agents: Agent[]; problems: string[] } {
  const { agents, problems } = catalog(dir, extensions, types);
  return { agents, problems };
}

function catalog(dir: string, extensions: InstalledExtension[], types?: HarnessTypes): Catalog {
  const agents: Agent[] = [];
  const problems: string[] = [];
  const broken = new Map<string, string>();
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => AGENT_EXTENSIONS.includes(extname(name).toLowerCase()))
        .sort()
    : [];
  for (const name of files) {
    try {
      agents.push(loadAgentFile(join(dir, name), types));
    } catch (err) {
      problems.push((err as Error).message);
      broken.set(idFromFile(name), (err as Error).message);
    }
  }
  for (const extension of extensions) {
    const found = extensionAgents(extension, types);
    agents.push(...found.agents);
    problems.push(...found.problems);
    for (const [id, problem] of found.broken) broken.set(id, problem);
  }
  const seen = new Map<string, string>();
  for (const agent of agents) {
    const first = seen.get(agent.id);
    if (first)
      problems.push(`${agent.file}: id "${agent.id}" is already defined in ${first}; ids must be unique`);
    else seen.set(agent.id, agent.file);
  }
  return { agents, problems, broken };
}

/** `--agent FILE|ID`: a path to a file, else an id from the catalog. */
export function resolveAgent(
  ref: string,
  dir: string,
  extensions: InstalledExtension[],
  types?: HarnessTypes,
): Agent {
  const looksLikeFile =
    ref.includes("/") && !ref.startsWith("ext:")
      ? true
      : AGENT_EXTENSIONS.includes(extname(ref).toLowerCase());
  if (looksLikeFile) return loadAgentFile(ref, types);
  const { agents, broken } = catalog(dir, extensions, types);
  const agent = agents.find((a) => a.id === ref);
  if (agent) return agent;
  // The broken agent of that id, not any problem whose text holds `ref` (`deploy` named deploy-prod.yaml's).
  const problem = broken.get(ref);
  if (problem) throw new AgentError(problem);
  const known = agents.map((a) => a.id).join(", ") || "(none)";
  throw new AgentError(
    `no agent "${ref}" in ${dir} or in installed extensions; known agents: ${known} (or give a file path)`,
  );
}
