// A session's MCP servers (its `mcp_servers`), as the session tool services Brain starts with the session's
// harness and stops when the session closes. Servers start in parallel; one that fails does not hold up the rest.
import type { ExitKills } from "../../core/exit-kills.js";
import type { McpServers } from "../../protocol/config.js";
import type { SessionToolServices, ToolService, ToolServiceEvent } from "../tool-service.js";
import { stdioArgsWarnings } from "./argv-warnings.js";
import { BOUND_OWNER, shadowedMessage } from "./names.js";
import type { McpServerService } from "./server.js";

export interface McpHostOptions {
  /** Relative `cwd`s of stdio servers resolve against this (the directory of brain.config.json). */
  baseDir: string;
  /** The host environment, for `${VAR}` references. */
  env?: NodeJS.ProcessEnv;
  /** Automatic restart delays after a crash (tests shorten them). */
  restartDelays?: readonly number[];
  /** How long after each failed first start a turn may try the server again (the last repeats). */
  startRetryDelays?: readonly number[];
  /** Brain's: kills each stdio server's group as Brain exits. */
  exits?: ExitKills;
}

export class McpSessionServers implements SessionToolServices {
  private servers: McpServerService[] = [];
  private started: Promise<ToolService[]> | undefined;
  private closed = false;
  private retrying = false;
  /** Where the servers' events go: the session's log. */
  private report: ((event: ToolServiceEvent) => void) | undefined;
  /** Events held back while servers start, until the clash check says which tools each really offers. */
  private held: ToolServiceEvent[] | undefined;
  /** The names config.tools binds (the session's before any server's), as the last start or retry was given. */
  private bound: readonly string[] = [];

  constructor(
    private readonly config: McpServers,
    private readonly options: McpHostOptions,
  ) {}

  /** Each stdio server's argument that puts a credential on its command line (argvCredentialWarnings). */
  warnings(): string[] {
    const env = this.options.env ?? process.env;
    return Object.entries(this.config).flatMap(([name, server]) =>
      server.command === undefined ? [] : stdioArgsWarnings(name, server.args ?? [], env),
    );
  }

  start(report: (event: ToolServiceEvent) => void, bound: readonly string[] = []): Promise<ToolService[]> {
    this.report = report;
    this.bound = bound;
    this.started ??= (async () => {
      if (this.closed) return [];
      // The MCP SDK loads with the first session that has servers: hosts without any never pay for it.
      const { McpServerService } = await import("./server.js");
      if (this.closed) return [];
      const env = this.options.env ?? process.env;
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
            (event) => this.relay(event),
            this.options.restartDelays,
            this.options.startRetryDelays,
          ),
      );
      await this.startHeld(this.servers, bound, (server) => server.start());
      return this.servers;
    })();
    return this.started;
  }

  /**
   * Tries again, once the first start is done, the servers that never started and whose backoff allows it now,
   * and lists afresh the tools of those that said they changed. Resolves with every server when one of them now
   * offers other tools (the session's tools are to be bound afresh), else undefined. `signal` (the turn's) gives the tries up.
   */
  async retry(
    report: (event: ToolServiceEvent) => void,
    bound: readonly string[],
    signal: AbortSignal,
  ): Promise<ToolService[] | undefined> {
    if (!this.started || this.closed || this.retrying) return undefined;
    await this.started;
    const due = this.servers.filter((server) => server.startDue);
    const changed = this.servers.filter((server) => server.changeDue);
    if ((due.length === 0 && changed.length === 0) || this.closed) return undefined;
    this.report = report;
    this.bound = bound;
    this.retrying = true;
    try {
      const started = new Set<McpServerService>();
      let relisted = false;
      await this.startHeld([...due, ...changed], bound, async (server) => {
        if (changed.includes(server)) relisted = (await server.refresh(signal)) || relisted;
        else if (await server.retryStart(signal)) started.add(server);
      });
      if (relisted) return this.servers;
      for (const server of started) if ((await server.list()).length > 0) return this.servers;
      return undefined;
    } finally {
      this.retrying = false;
    }
  }

  /**
   * Starts `fresh` with their events held back until the clash check, so that each `started` names the tools the
   * server really offers.
   */
  private async startHeld(
    fresh: McpServerService[],
    bound: readonly string[],
    start: (server: McpServerService) => Promise<void>,
  ): Promise<void> {
    const held: ToolServiceEvent[] = [];
    this.held = held;
    try {
      await Promise.all(fresh.map(start));
      const shadowed = await this.resolveClashes(bound, fresh);
      this.held = undefined;
      for (const event of held) this.report?.(withShadowed(event, shadowed.get(event.service)));
    } finally {
      this.held = undefined;
    }
  }

  private relay(event: ToolServiceEvent): void {
    if (this.held) this.held.push(event);
    else if (event.state === "restarted") void this.checkRestarted(event);
    else this.report?.(event);
  }

  /**
   * A server restarted after a crash may offer tools its last start did not: their names go through the same
   * check as a first start's, the others' names staying theirs, before its event says what it offers.
   */
  private async checkRestarted(event: ToolServiceEvent): Promise<void> {
    const server = this.servers.find((s) => s.name === event.service);
    const shadowed = server ? await this.resolveClashes(this.bound, [server]) : undefined;
    this.report?.(withShadowed(event, shadowed?.get(event.service)));
  }

  /**
   * Two servers' tools can get one session name (`git` + `_push`, `git_` + `push`): the name goes to the server
   * first in the config, and the others leave their tool out. A name config.tools binds is the session's before
   * any server's (only a session recorded before such names were refused has one). A server started late (its
   * first start failed) comes after those already running: their names stay theirs. Returns, per server of
   * `fresh`, the names it left out and whose they are.
   */
  private async resolveClashes(
    bound: readonly string[],
    fresh: readonly McpServerService[],
  ): Promise<Map<string, Map<string, string>>> {
    const owners = new Map<string, string>(bound.map((name) => [name, BOUND_OWNER]));
    for (const server of this.servers) {
      if (fresh.includes(server)) continue;
      for (const { name } of await server.list()) if (!owners.has(name)) owners.set(name, server.name);
    }
    const shadowed = new Map<string, Map<string, string>>();
    for (const server of fresh) {
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
  if (!clashes || (event.state !== "started" && event.state !== "restarted")) return event;
  const message = [event.message, shadowedMessage(clashes)].filter(Boolean).join("; ");
  return { ...event, tools: event.tools?.filter((name) => !clashes.has(name)), message };
}
