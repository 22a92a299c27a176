// A session's MCP servers (its `mcp_servers`), as the session tool services Brain starts with the session's
// harness and stops when the session closes. Servers start in parallel; one that fails does not hold up the rest.
import type { ExitKills } from "../../core/exit-kills.js";
import type { McpServers } from "../../protocol/config.js";
import type { SessionToolServices, ToolService, ToolServiceEvent } from "../tool-service.js";
import { BOUND_OWNER, shadowedMessage } from "./names.js";
import type { McpServerService } from "./server.js";

export interface McpHostOptions {
  /** Relative `cwd`s of stdio servers resolve against this (the directory of brain.config.json). */
  baseDir: string;
  /** The host environment, for `${VAR}` references. */
  env?: NodeJS.ProcessEnv;
  /** Automatic restart delays after a crash (tests shorten them). */
  restartDelays?: readonly number[];
  /** Brain's: kills each stdio server's group as Brain exits. */
  exits?: ExitKills;
}

export class McpSessionServers implements SessionToolServices {
  private servers: McpServerService[] = [];
  private started: Promise<ToolService[]> | undefined;
  private closed = false;

  constructor(
    private readonly config: McpServers,
    private readonly options: McpHostOptions,
  ) {}

  start(report: (event: ToolServiceEvent) => void, bound: readonly string[] = []): Promise<ToolService[]> {
    this.started ??= (async () => {
      if (this.closed) return [];
      // The MCP SDK loads with the first session that has servers: hosts without any never pay for it.
      const { McpServerService } = await import("./server.js");
      if (this.closed) return [];
      const env = this.options.env ?? process.env;
      // The first start's events wait for the clash check below, so that each server's `started` names the
      // tools it really offers.
      const held: ToolServiceEvent[] = [];
      let holding = true;
      const hold = (event: ToolServiceEvent) => (holding ? held.push(event) : report(event));
      this.servers = Object.entries(this.config).map(
        ([name, config]) =>
          new McpServerService(
            {
              name,
              config,
              baseDir: this.options.baseDir,
              env,
              ...(this.options.exits ? { exits: this.options.exits } : {}),
            },
            hold,
            this.options.restartDelays,
          ),
      );
      await Promise.all(this.servers.map((server) => server.start()));
      const shadowed = await this.resolveClashes(bound);
      holding = false;
      for (const event of held) report(withShadowed(event, shadowed.get(event.service)));
      return this.servers;
    })();
    return this.started;
  }

  /**
   * Two servers' tools can get one session name (`git` + `_push`, `git_` + `push`): the name goes to the server
   * first in the config, and the others leave their tool out. A name config.tools binds is the session's before
   * any server's (only a session recorded before such names were refused has one). Returns, per server, the names
   * it left out and whose they are.
   */
  private async resolveClashes(bound: readonly string[]): Promise<Map<string, Map<string, string>>> {
    const owners = new Map<string, string>(bound.map((name) => [name, BOUND_OWNER]));
    const shadowed = new Map<string, Map<string, string>>();
    for (const server of this.servers) {
      const clashes = new Map<string, string>();
      for (const { name } of await server.list()) {
        const owner = owners.get(name);
        if (owner === undefined) owners.set(name, server.name);
        else clashes.set(name, owner);
      }
      if (clashes.size === 0) continue;
      server.withhold(clashes);
      shadowed.set(server.name, clashes);
    }
    return shadowed;
  }

  async close(): Promise<void> {
    this.closed = true;
    // Stopped before the start is awaited: a server that hangs at initialize gives up now, not at its deadline.
    await Promise.all(this.servers.map((server) => server.close()));
    await this.started?.catch(() => {});
  }
}

/** The hook Brain takes: a session with MCP servers gets them, others nothing. */
export function mcpSessionTools(options: McpHostOptions) {
  return (record: { mcp_servers?: McpServers }): SessionToolServices | undefined =>
    record.mcp_servers && Object.keys(record.mcp_servers).length > 0
      ? new McpSessionServers(record.mcp_servers, options)
      : undefined;
}

/** A server's first `started` event, without the tools it left out to other servers, saying so. */
function withShadowed(event: ToolServiceEvent, clashes: Map<string, string> | undefined): ToolServiceEvent {
  if (!clashes || event.state !== "started") return event;
  const message = [event.message, shadowedMessage(clashes)].filter(Boolean).join("; ");
  return { ...event, tools: event.tools?.filter((name) => !clashes.has(name)), message };
}
