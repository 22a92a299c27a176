// A stdio MCP server's `args` are its process's command line, which every local user can read (ps,
// /proc/PID/cmdline): a credential there, written out or as a `${VAR}` Brain fills in, is shown to all of them.
// Such configs work, so Brain starts them as before and says so in the session's log, with where the key goes.
import { argvCredentialWarnings } from "../../core/credentials.js";

/** One warning for each of the server's arguments that holds a credential; `who` starts the server. */
export function stdioArgsWarnings(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  who = "Brain",
): string[] {
  const where = `mcp_servers.${name}.args`;
  return argvCredentialWarnings(
    args,
    env,
    where,
    `${who} starts MCP server "${name}" with it. Give it to the server in mcp_servers.${name}.env instead (e.g. "env": {"API_KEY": "\${API_KEY}"}) if the server reads it from its environment, or in a file only you can read`,
  );
}
