// What differs between ACP agents once the protocol is the same: how each is pointed at the session's provider
// (environment, a config file under the native dir), what it keeps on disk and where, what session/new's
// `_meta` may carry, and each agent's known faults that the harness works around.
import type { ContainerUser } from "../../core/harness.js";
import type { NativeFile, ProviderCredentials, SessionConfig } from "../../protocol/runner.js";
import type { StdioServerSpec } from "../../tools/endpoint/index.js";
import type { ProxyWire } from "../cli/credential-proxy.js";
import type { CliFamilyDescriptor } from "../cli/family.js";
import type { CliContext } from "../cli/harness.js";
import type { CliProvider } from "../cli/services.js";

export interface AcpAgentContext {
  family: CliFamilyDescriptor;
  /** The session's native dir: the agent's state goes under it. */
  dir: string;
  /** The agent's working directory. */
  cwd: string;
  config: SessionConfig;
  provider: ProviderCredentials;
  /**
   * `bound` tool mode (config.tool_mode): Brain's tool endpoint, which session/new adds to the agent's MCP
   * servers; the profile's hooks turn the agent's own tools off while it is set.
   */
  endpoint?: StdioServerSpec;
  /** What the session's permission policy says of a tool (HarnessOptions.policy), for agents told it up front. */
  policy?(tool: string): "allow" | "ask" | "deny";
  /**
   * The user the agent runs as in its container, when not Brain's (ContainerContext.user): the config dirs and
   * files made for it are handed to it, or it could not write its state there.
   */
  owner?: ContainerUser;
}

/** The context a profile is given, from the harness's. */
export function agentContext(ctx: CliContext, endpoint?: StdioServerSpec): AcpAgentContext {
  const { options } = ctx;
  return {
    family: ctx.family,
    dir: options.dir,
    cwd: ctx.cwd,
    config: options.config,
    provider: options.provider,
    ...(endpoint ? { endpoint } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.container?.user ? { owner: options.container.user } : {}),
  };
}

/** What the harness serves an agent from Brain's process as it starts it, each closed with the harness. */
export interface AcpServices {
  /**
   * The provider as the agent is to see it, `base_url` as its SDK joins paths to it: with a key, the session's
   * credential proxy's URL and token instead of the real ones (../cli/services.ts), so no command the agent
   * runs can read the key from its environment.
   */
  provider(wire: ProxyWire, base_url: string | undefined): Promise<CliProvider>;
}

export interface AcpProfile {
  /**
   * `bound` tool mode: whether a tool name the agent reports (as the update mapper names it) is one of the
   * endpoint's tools, whose call the endpoint logs itself. Absent: the agent has no bound mode (no known switch
   * for its own tools).
   */
  endpointTool?(name: string): boolean;
  /** Refuses settings the agent cannot work with (a provider api it does not speak), before anything starts. */
  check?(ctx: AcpAgentContext): void;
  /** Arguments before the session's own `options.args`. */
  args?(ctx: AcpAgentContext): string[];
  /**
   * Writes the agent's config under the native dir; returns the variables that point it there and at the
   * provider (as `services.provider` gives it: never the key itself, unless the operator opted out).
   */
  prepare?(
    ctx: AcpAgentContext,
    services: AcpServices,
  ): Record<string, string> | Promise<Record<string, string>>;
  /** session/new's and session/load's `_meta` (the system prompt, a model, where an agent reads them there). */
  sessionMeta?(ctx: AcpAgentContext): Record<string, unknown> | undefined;
  /**
   * Puts a saved session where the agent looks for it from `cwd` (agents that file sessions by working
   * directory, after a restore into another directory); false when there is nothing to load.
   */
  place?(ctx: AcpAgentContext, sessionId: string): boolean | Promise<boolean>;
  /**
   * The agent's own name for the tool a tool_call is about, when the update does not say it plainly (codex-acp
   * sends only a kind, and calls `ls` a "search"): the name the permission policy and the log use.
   */
  toolName?(update: unknown): string | undefined;
  /** The tool's arguments, for agents that send no `rawInput` (gemini's ACP mode shows only a title). */
  toolArguments?(update: unknown): Record<string, unknown> | undefined;
  /**
   * Whether a failed session/prompt (its error's `data` and message) was the model provider's failure rather
   * than the agent's; undefined leaves it to the message (an HTTP status, "API Error", rate limits).
   */
  providerFailure?(data: unknown, message: string): boolean | undefined;
  /** The agent's own files a checkpoint carries (relative to the native dir). */
  files?(dir: string): Promise<NativeFile[]>;
  /**
   * Whether the agent's session file already holds the turn that ended with `lastText`: agents whose answer to
   * session/prompt comes before their session file is written (Claude Code appends the turn's last message
   * after reporting the turn's end) are waited for before a checkpoint lists their files.
   */
  written?(ctx: AcpAgentContext, sessionId: string, lastText: string): Promise<boolean>;
  /**
   * The agent answers session/load before its history replay has all been sent (gemini-cli 0.61 does not await
   * it): updates are dropped until they stop coming, so the replay's tail is not taken for the next turn's.
   */
  replayTrailsLoad?: boolean;
  /**
   * The agent mishandles the turn after a session/cancel (claude-agent-acp 0.23: the next prompt returns at once
   * and its output lags one turn behind): after an interrupted turn the process is stopped, and the next prompt
   * starts a fresh one that loads the session.
   */
  restartAfterCancel?: boolean;
}
