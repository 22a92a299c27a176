// Agent definitions the daemon offers (GET /v1/agents, POST /v1/sessions {"agent": id}). Where they come from
// (nui ADL files, extensions) is the loader's business; the daemon only needs to list them and turn one into
// the settings of a new session.

import { join } from "node:path";
import { listAgents } from "../agents/catalog.js";
import { sessionInput } from "../agents/session-input.js";
import type { NewSessionInput } from "../core/brain.js";
import type { HarnessTypes } from "../harnesses/catalog.js";
import { extensionsDir, listExtensions } from "../harnesses/ext/extensions.js";
import type { AgentList } from "../protocol/api.js";

/** One entry of GET /v1/agents. */
export type AgentSummary = AgentList["agents"][number];

export interface AgentCatalog {
  list(): Promise<AgentSummary[]>;
  /** The new session's settings, or undefined when there is no agent by that id. */
  resolve(id: string): Promise<Omit<NewSessionInput, "id" | "tenant"> | undefined>;
}

export const NO_AGENTS: AgentCatalog = {
  list: async () => [],
  resolve: async () => undefined,
};

/**
 * The agent definitions under $BRAIN_HOME: `agents/*.yaml|yml|json` and installed extensions' agents, read
 * afresh on every call (a file dropped in shows up without a restart). Only ids from the catalog resolve: an
 * API client never makes the daemon read a path of its choosing.
 */
export function homeAgents(home: string, types?: HarnessTypes): AgentCatalog {
  const load = () =>
    listAgents(join(home, "agents"), listExtensions(extensionsDir(home)).extensions, types).agents;
  return {
    list: async () =>
      load().map((a) => ({
        id: a.id,
        ...(a.definition.name ? { name: a.definition.name } : {}),
        ...(a.definition.description ? { description: a.definition.description } : {}),
      })),
    resolve: async (id) => {
      const agent = load().find((a) => a.id === id);
      if (!agent) return undefined;
      const { id: _, tenant: __, ...input } = sessionInput(agent);
      return input;
    },
  };
}
