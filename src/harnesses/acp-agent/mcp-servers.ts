// The MCP servers an ACP agent is given in session/new and session/load: for now the session's own
// `mcp_servers`, which the agent starts and calls itself. (The seam for Brain's per-session endpoint of its
// bound tools: one more entry in this list.) `${VAR}` references are filled in from the host's environment
// here, as Brain does when it starts a server itself.
import type { McpServer as AcpMcpServer } from "@agentclientprotocol/sdk";
import { HarnessError } from "../../core/harness.js";
import type { McpServers } from "../../protocol/config.js";
import { expandRecord, expandVars, McpConfigError } from "../../tools/mcp/expand.js";

const pairs = (record: Record<string, string>) =>
  Object.entries(record).map(([name, value]) => ({ name, value }));

export function acpMcpServers(
  label: string,
  servers: McpServers,
  env: NodeJS.ProcessEnv,
): { servers: AcpMcpServer[]; warnings: string[] } {
  const out: AcpMcpServer[] = [];
  const warnings: string[] = [];
  try {
    for (const [name, server] of Object.entries(servers)) {
      const where = `mcp_servers.${name}`;
      if (server.tools)
        warnings.push(`${where}.tools cannot be passed to an ACP agent: it sees all the server's tools`);
      if (server.command !== undefined) {
        if (server.cwd !== undefined)
          warnings.push(
            `${where}.cwd cannot be passed to an ACP agent: the server starts in the agent's directory`,
          );
        out.push({
          name,
          command: expandVars(server.command, env, `${where}.command`),
          args: (server.args ?? []).map((arg, i) => expandVars(arg, env, `${where}.args[${i}]`)),
          env: pairs(expandRecord(server.env, env, `${where}.env`)),
        });
        continue;
      }
      const url = expandVars(server.url!, env, `${where}.url`);
      const headers = pairs(expandRecord(server.headers, env, `${where}.headers`));
      out.push(
        server.type === "sse" ? { type: "sse", name, url, headers } : { type: "http", name, url, headers },
      );
    }
  } catch (err) {
    if (err instanceof McpConfigError) throw new HarnessError("brain_error", `${label}: ${err.message}`);
    throw err;
  }
  return { servers: out, warnings };
}
