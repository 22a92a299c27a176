// `${VAR}` in an MCP server's env, headers, args and url is the host's variable VAR, read when the server
// starts: session records then hold the reference, never the secret.
export class McpConfigError extends Error {
  override name = "McpConfigError";
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Replaces every `${VAR}`; a variable that is not set is an error naming it and where it was used. */
export function expandVars(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(REFERENCE, (_match, name: string) => {
    const set = env[name];
    if (set === undefined) throw new McpConfigError(`${where} uses \${${name}}, but ${name} is not set`);
    return set;
  });
}

export function expandRecord(
  values: Record<string, string> | undefined,
  env: NodeJS.ProcessEnv,
  where: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values ?? {}))
    out[key] = expandVars(value, env, `${where}.${key}`);
  return out;
}
