// Agent definitions for the CLI: `$BRAIN_HOME/agents` plus installed extensions' agents, and `--agent FILE|ID`
// as a layer of the session `brain run` creates (over the config's defaults, under the command line).
import { join } from "node:path";
import { type Agent, resolveAgent } from "../agents/catalog.js";
import { sessionInput } from "../agents/session-input.js";
import type { SessionLayer } from "../core/session-input.js";
import type { HarnessTypes } from "../harnesses/catalog.js";
import { extensionsDir, listExtensions } from "../harnesses/ext/extensions.js";
import { parseExtensionRef } from "../protocol/nui/manifest.js";
import { ConfigError } from "./config.js";

export function agentsDir(home: string): string {
  return join(home, "agents");
}

/** The agent `ref` names, checked: an ext: harness must be installed. */
/** `types`: the harness types this config's host runs (`configHarnessTypes`); an unknown one is refused. */
export function findAgent(ref: string, home: string, types?: HarnessTypes): Agent {
  const { extensions } = listExtensions(extensionsDir(home));
  let agent: Agent;
  try {
    agent = resolveAgent(ref, agentsDir(home), extensions, types);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const ext = parseExtensionRef(agent.definition.harness.type);
  if (ext) {
    const installed = extensions.find((e) => e.name === ext.extension);
    if (!installed) {
      throw new ConfigError(
        `${agent.file}: harness.type ${agent.definition.harness.type}: extension "${ext.extension}" is not installed; install it with brain ext install PATH`,
      );
    }
    if (!installed.harnesses.some((h) => h.id === ext.id)) {
      const known = installed.harnesses.map((h) => h.ref).join(", ") || "(none)";
      throw new ConfigError(
        `${agent.file}: harness.type: extension "${ext.extension}" has no harness "${ext.id}"; it has ${known}`,
      );
    }
  }
  return agent;
}

/** The agent definition's layer of a new session's input (the working dir is where brain runs). */
export function agentLayer(agent: Agent, cwd = process.cwd()): SessionLayer {
  const { id: _, tenant: __, ...layer } = sessionInput(agent, { workingDir: cwd });
  return layer;
}
