// The MCP servers an ACP agent is given in session/new and session/load: for now the session's own
// `mcp_servers`, which the agent starts and calls itself. (The seam for Brain's per-session endpoint of its
// bound tools: one more entry in this list.) `${VAR}` references are filled in from the host's environment
// here, as Brain does when it starts a server itself.
import type { McpServer as AcpMcpServer } from "@agentclientprotocol/sdk";
import { HarnessError } from "../../core/harness.js";
import type { McpServers } from "../../protocol/config.js";
import { stdioArgsWarnings } from "../../tools/mcp/argv-warnings.js";
import { expandRecord, expandVars, McpConfigError } from "../../tools/mcp/expand.js";
import { exposedName } from "../../tools/mcp/names.js";

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
        warnings.push(...stdioArgsWarnings(name, server.args ?? [], env, `the "${label}" agent`));
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

type Decision = "allow" | "ask" | "deny";
const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The name Brain's policy judges an agent's call by, or why the call is refused outright. An agent names a tool
 * of the session's MCP servers its own way (`mcp__fs__write_file`: claude, codex; `mcp_fs_write_file`: gemini),
 * while the operator's policy names it as every other family does, `fs__write_file`: judged by the agent's name
 * alone, a rule for it never matched and the default let the call run. The stricter verdict of the two names
 * holds (a rule written for the agent's name still applies). A tool the server's `tools` leaves out is refused:
 * the agent is offered all of the server's tools (acpMcpServers says so), so its calls are where the list holds.
 */
export function policyUse(
  name: string,
  servers: McpServers,
  policy: ((tool: string) => Decision) | undefined,
): { tool: string; refused?: string } {
  let tool = name;
  let verdict = policy?.(name) ?? "allow";
  for (const [server, config] of Object.entries(servers)) {
    for (const prefix of [`mcp__${server}__`, `mcp_${server}_`]) {
      if (!name.startsWith(prefix)) continue;
      const own = name.slice(prefix.length);
      const brainName = exposedName(server, own);
      if (config.tools && !config.tools.some((listed) => exposedName(server, listed) === brainName))
        return {
          tool: brainName,
          refused: `${name} is not among the tools mcp_servers.${server}.tools offers (${config.tools.join(", ")}); denied`,
        };
      const decision = policy?.(brainName) ?? "allow";
      if (STRICTNESS[decision] > STRICTNESS[verdict]) [tool, verdict] = [brainName, decision];
    }
  }
  return { tool };
}

/**
 * The option kinds that answer a verdict, the first offered taken. "Always" has the agent run later calls of the
 * kind without asking: given only for a tool the policy allows outright, never for one a person allowed once.
 */
export function answerKinds(verdict: "allow" | "deny", policy: Decision): string[] {
  if (verdict === "deny") return ["reject_once", "reject_always"];
  return policy === "allow" ? ["allow_once", "allow_always"] : ["allow_once"];
}
