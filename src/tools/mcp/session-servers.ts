// A session's MCP servers (its `mcp_servers`), as the session tool services Brain starts with the session's
// harness and stops when the session closes. Servers start in parallel; one that fails does not hold up the rest.
import type { McpServers } from "../../protocol/config.js";
import type { SessionToolServices, ToolService, ToolServiceEvent } from "../tool-service.js";
import type { McpServerService } from "./server.js";

export interface McpHostOptions {
  /** Relative `cwd`s of stdio servers resolve against this (the directory of brain.config.json). */
  baseDir: string;
  /** The host environment, for `${VAR}` references. */
  env?: NodeJS.ProcessEnv;
  /** Automatic restart delays after a crash (tests shorten them). */
  restartDelays?: readonly number[];
}

export class McpSessionServers implements SessionToolServices {
  private servers: McpServerService[] = [];
  private started: Promise<ToolService[]> | undefined;
  private closed = false;

  constructor(
    private readonly config: McpServers,
    private readonly options: McpHostOptions,
  ) {}

  start(report: (event: ToolServiceEvent) => void): Promise<ToolService[]> {
    this.started ??= (async () => {
      if (this.closed) return [];
      // The MCP SDK loads with the first session that has servers: hosts without any never pay for it.
      const { McpServerService } = await import("./server.js");
      if (this.closed) return [];
      const env = this.options.env ?? process.env;
      this.servers = Object.entries(this.config).map(
        ([name, config]) =>
          new McpServerService(
            { name, config, baseDir: this.options.baseDir, env },
            report,
            this.options.restartDelays,
          ),
      );
      await Promise.all(this.servers.map((server) => server.start()));
      return this.servers;
    })();
    return this.started;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.started?.catch(() => {});
    await Promise.all(this.servers.map((server) => server.close()));
  }
}

/** The hook Brain takes: a session with MCP servers gets them, others nothing. */
export function mcpSessionTools(options: McpHostOptions) {
  return (record: { mcp_servers?: McpServers }): SessionToolServices | undefined =>
    record.mcp_servers && Object.keys(record.mcp_servers).length > 0
      ? new McpSessionServers(record.mcp_servers, options)
      : undefined;
}
