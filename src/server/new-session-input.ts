// What a create request asks a new session to be: the daemon's defaults, the agent definition the body names and
// the body itself, resolved by the core (Brain.resolveInput) within what the caller's provider grant allows.
import type { Brain, NewSessionInput } from "../core/brain.js";
import { BrainError } from "../core/errors.js";
import type { OneAtATime } from "../core/one-at-a-time.js";
import type { Session } from "../core/session.js";
import type { ProviderGrant } from "../core/session-input.js";
import type { CreateSessionBody } from "../protocol/api.js";
import type { SessionDefaults } from "../protocol/config.js";
import type { AgentCatalog } from "./agents.js";
import { DEFAULT_TENANT, type Principal } from "./auth/tokens.js";
import { ApiError, inField, notFound } from "./errors.js";

export interface NewSessionParts {
  brain: Brain;
  agents: AgentCatalog;
  defaults: SessionDefaults;
}

export async function newSessionInput(
  parts: NewSessionParts,
  caller: Principal,
  body: CreateSessionBody,
  grant: ProviderGrant,
): Promise<NewSessionInput> {
  let agent: Omit<NewSessionInput, "id" | "tenant"> | undefined;
  if (body.agent) {
    agent = await parts.agents.resolve(body.agent);
    if (!agent) {
      const known = (await parts.agents.list()).map((a) => a.id).join(", ") || "(none)";
      throw new ApiError("bad_request", `unknown agent "${body.agent}"; known agents: ${known}`, "agent");
    }
  }
  const { harness, config, provider, permissions, id, editor_cwd } = body;
  return parts.brain.resolveInput({
    defaults: parts.defaults,
    ...(agent ? { agent } : {}),
    call: {
      ...(harness ? { harness } : {}),
      ...(config ? { config } : {}),
      ...(provider ? { provider } : {}),
      ...(permissions ? { permissions } : {}),
      ...(id ? { id } : {}),
      ...(editor_cwd ? { editor_cwd } : {}),
      ...(caller.tenant !== DEFAULT_TENANT ? { tenant: caller.tenant } : {}),
    },
    grant,
  });
}

/** A handoff refused for a setting it would carry: the body holds only `to`, the message names the setting. */
export function carriedRefusal(err: unknown, id: string, to: string): unknown {
  if (!(err instanceof BrainError && err.code === "bad_request" && err.field)) return inField(err, "to");
  const message = `session ${id} cannot be handed off to harness "${to}" with the settings it has; ${err.message}`;
  return new ApiError("bad_request", message, "to");
}

/**
 * The session `make` makes from session `source`, one at a time with the source's deletes here (`sources`: see
 * SessionService), unless another node deleted `source` meanwhile (it waits for a delete of it under way there:
 * core/deleting-marks.ts). Then the session made, which would read its history from a log that is gone, is removed
 * and the answer is a fork's or handoff's of a session that is not there: 404, as on one node.
 */
export function madeFromKept(
  sources: OneAtATime,
  brain: Brain,
  source: string,
  make: () => Promise<Session>,
): Promise<Session> {
  return sources.run(source, async () => {
    const made = await make();
    if (await brain.deleting.stays(source)) return made;
    await brain.delete(made.id);
    throw notFound(`no session "${source}"`);
  });
}
