// A CLI in `bound` tool mode (config.tool_mode): its own tools, plugins and background work off, and only Brain's
// bound tools offered, through the session's tool endpoint (src/tools/endpoint). Each family says how its CLI
// is told so; what they share is here: whether a session is bound, and keeping the CLI's own report of an
// endpoint call out of the log, since the endpoint already logged that call as Brain's `tool.call`.
import { HarnessError, type HarnessOptions } from "../../core/harness.js";
import { ENDPOINT_SERVER_NAME } from "../../tools/endpoint/index.js";
import type { CliEvent } from "./events.js";
import type { CliFamilyDescriptor } from "./family.js";

/** True for a session in `bound` mode; a family that cannot run bound refuses it, saying what is missing. */
export function isBound(family: CliFamilyDescriptor, options: HarnessOptions): boolean {
  if (options.config.tool_mode !== "bound") return false;
  if (family.bound === true) return true;
  throw new HarnessError(
    "brain_error",
    `${family.harness}: config.tool_mode "bound" is not available for ${family.title}: ${family.bound ?? "not implemented"}; use tool_mode "native" (its own tools, under the permission policy) or another harness`,
  );
}

/**
 * Drops the CLI's own tool.call/tool.result for calls to the endpoint (the endpoint logged them, under Brain's
 * names): the same call twice in the log would read as two calls.
 */
export class EndpointCalls {
  private readonly ids = new Set<string>();

  constructor(private readonly isEndpointTool: (name: string) => boolean) {}

  /** The event to log, or undefined when it is the CLI's echo of an endpoint call. */
  filter(event: CliEvent): CliEvent | undefined {
    if (event.type === "tool.call" && this.isEndpointTool(event.data.name)) {
      this.ids.add(event.data.id);
      return undefined;
    }
    if (event.type === "tool.result" && this.ids.delete(event.data.id)) return undefined;
    return event;
  }
}

/** Claude Code's and Codex's name for an endpoint tool: `mcp__<server>__<tool>`. */
export function isMcpEndpointTool(name: string): boolean {
  return name.startsWith(`mcp__${ENDPOINT_SERVER_NAME}__`);
}

/** The warning for a CLI that carries on without the endpoint's server: the model then has no tools. */
export function endpointNotConnected(status: string | undefined): string {
  return `Brain's tool endpoint is not connected (status: ${status ?? "missing"}); the model has no tools`;
}
