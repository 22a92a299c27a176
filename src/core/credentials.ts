// What a session is given of the host's secrets: its provider's credentials, from the environment, and the list
// of values its log must never hold.
import type { ProviderSettings } from "../protocol/config.js";
import type { ProviderCredentials } from "../protocol/runner.js";
import type { SessionRecord } from "../protocol/session.js";
import { dockerEnvArgs } from "./docker-env-args.js";
import { SessionError } from "./errors.js";
import { envSecrets, SECRET_NAME, type Secret } from "./redact.js";

/**
 * The host's secrets a Brain redacts everywhere: secret-named variables, every provider's `api_key_env` whatever
 * its name, and `secretNames` (variables the config names, such as MCP `${VAR}`s). The CLI's errors use it too.
 */
export function hostSecrets(
  providers: Record<string, { api_key_env?: string }> | undefined,
  secretNames: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Secret[] {
  const keyNames = Object.values(providers ?? {}).flatMap((p) => p.api_key_env ?? []);
  return envSecrets(env, [...keyNames, ...secretNames]);
}

/** The values this session's log must never hold, beyond the host's. */
export function sessionSecrets(
  record: SessionRecord,
  settings: ProviderSettings | undefined,
  provider: ProviderCredentials,
  env: NodeJS.ProcessEnv,
): Secret[] {
  const out: Secret[] = [];
  if (provider.api_key) out.push({ name: settings?.api_key_env ?? "provider_key", value: provider.api_key });
  // A gateway's key may ride in the base URL itself (https://user:KEY@host, ?key=KEY): a provider's error or an
  // echoing model can quote it.
  if (provider.base_url) out.push(...urlSecrets(provider.base_url));
  out.push(...recordSecrets(record, env));
  return out;
}

/**
 * Headers that carry a credential whatever their value looks like: Authorization and those gateways name after it
 * (cf-aig-authorization, Helicone-Auth), and cookies.
 */
const CREDENTIAL_HEADER = /^(?:[A-Za-z0-9_-]*-)?(?:authorization|auth)$|^cookie$/i;

/**
 * A header or query parameter whose name says it holds a secret. Such names are written with '-' where a
 * variable has '_' (x-api-key, X-Goog-Api-Key), which SECRET_NAME alone does not match.
 */
const secretNamed = (name: string) => SECRET_NAME.test(name.replaceAll("-", "_"));

/** `<scheme> <credential>`, as an Authorization header is written. */
const AUTH_SCHEME = /^\s*[A-Za-z][A-Za-z0-9_-]*\s+(\S+)\s*$/;

/**
 * The secrets a session's record names or holds: its MCP servers' `${VAR}` values, and what it holds in plain
 * text: the secret-named variables it hands its processes (an agent definition's `env`, an MCP server's `env`),
 * an MCP server's or the api harness's credential headers and URL credentials written out rather than as
 * `${VAR}`, and the credentials in an inline provider's base URL.
 */
export function recordSecrets(
  record: Pick<SessionRecord, "mcp_servers" | "config" | "provider">,
  env: NodeJS.ProcessEnv,
): Secret[] {
  const out: Secret[] = [];
  const mcpNames = [...JSON.stringify(record.mcp_servers ?? {}).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)];
  for (const [, name] of mcpNames) {
    const value = env[name!];
    if (value) out.push({ name: name!, value });
  }
  // A value with a `${VAR}` in it shows the reference as written; the variable's value is redacted above.
  for (const server of Object.values(record.mcp_servers ?? {})) out.push(...writtenOut(server));
  // An agent definition's aiAssets.mcpServers (handed to its harness in config.options) write theirs out too.
  // Their `${VAR}`s are not looked up: a client may set options on some harnesses, and a variable's value its
  // session redacted would tell it, from a guess its agent echoed, what the host's variable holds.
  const given = record.config.options?.mcp_servers;
  if (Array.isArray(given)) {
    for (const server of given) if (server && typeof server === "object") out.push(...writtenOut(server));
  }
  // The api harness's headers, set by the operator for a gateway in front of its provider, may hold its key.
  out.push(...writtenOut({ headers: record.config.options?.headers }));
  // A CLI session's extra flags (an agent definition's args) may write a key out, as a server's args may.
  const args = record.config.options?.args;
  if (Array.isArray(args)) out.push(...argSecrets(args));
  // Inline provider settings (the config's defaults, an agent definition's baseUrl) are shown in the session's
  // view: a gateway key in their URL would be shown with them, though its log keeps it out (sessionSecrets).
  if (typeof record.provider === "object" && record.provider.base_url)
    out.push(...urlSecrets(record.provider.base_url));
  const assigned: [string, unknown][] = [];
  const sessionEnv = record.config.options?.env;
  if (sessionEnv && typeof sessionEnv === "object") assigned.push(...Object.entries(sessionEnv));
  // A docker agent definition's docker_args set variables too (`-e API_KEY=…`), which its container may echo.
  const dockerArgs = record.config.options?.docker_args;
  if (Array.isArray(dockerArgs))
    assigned.push(...dockerEnvArgs(dockerArgs).map((a): [string, string] => [a.name, a.value]));
  for (const [name, value] of assigned) {
    if (typeof value !== "string") continue;
    // A connection URL's password (DATABASE_URL=postgres://app:PASSWORD@db), whatever the variable's name.
    out.push(...(SECRET_NAME.test(name) ? [{ name, value }] : urlSecrets(value)));
  }
  return out;
}

/**
 * The credentials an MCP server's settings hold written out: secret-named env and its URLs' passwords, credential
 * headers, its URL's.
 */
function writtenOut(server: { env?: unknown; headers?: unknown; url?: unknown; args?: unknown }): Secret[] {
  const out: Secret[] = [];
  const strings = (values: unknown) =>
    values && typeof values === "object"
      ? Object.entries(values).filter((e): e is [string, string] => typeof e[1] === "string")
      : [];
  for (const [name, value] of strings(server.env)) {
    if (value.includes("${")) continue;
    out.push(...(SECRET_NAME.test(name) ? [{ name, value }] : urlSecrets(value)));
  }
  for (const [name, value] of strings(server.headers)) {
    if (!(secretNamed(name) || CREDENTIAL_HEADER.test(name)) || value.includes("${")) continue;
    out.push({ name, value });
    // A server's refusal quotes the credential without its scheme ("Bearer", "Basic", "token").
    const credential = AUTH_SCHEME.exec(value)?.[1];
    if (credential) out.push({ name, value: credential });
  }
  if (typeof server.url === "string") out.push(...urlSecrets(server.url));
  if (Array.isArray(server.args)) out.push(...argSecrets(server.args));
  return out;
}

/** A flag that names where a secret is (`--token-file PATH`, `--api-key-env NAME`), not the secret itself. */
const REFERENCE_FLAG = /[-_](?:file|path|env|var|name|dir|url)$/i;

/**
 * The credentials a server's command line writes out, as its README has one write them: the value of a
 * secret-named flag (`--api-key KEY`, `--token=KEY`), a credential header given as an argument (`Authorization:
 * Bearer KEY`, as mcp-remote's `--header` takes it), a URL's password. A `${VAR}` is shown as written.
 */
function argSecrets(args: unknown[]): Secret[] {
  return argCredentials(args).map(({ name, value }) => ({ name, value }));
}

/** argSecrets, each with the index of the argument that holds it. */
function argCredentials(args: unknown[]): (Secret & { index: number })[] {
  const out: (Secret & { index: number })[] = [];
  args.forEach((arg, i) => {
    if (typeof arg !== "string" || arg.includes("${")) return;
    const flag = /^--?([A-Za-z][\w-]*)(?:=(.*))?$/s.exec(arg);
    if (flag) {
      const [, name, joined] = flag;
      if (!secretNamed(name!) || REFERENCE_FLAG.test(name!)) return;
      const value = joined ?? args[i + 1];
      if (
        typeof value !== "string" ||
        value.includes("${") ||
        (joined === undefined && value.startsWith("-"))
      )
        return;
      const index = joined === undefined ? i + 1 : i;
      out.push({ name: joined === undefined ? arg : arg.slice(0, arg.indexOf("=")), value, index });
      return;
    }
    const header = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(\S.*)$/s.exec(arg);
    if (header && (secretNamed(header[1]!) || CREDENTIAL_HEADER.test(header[1]!))) {
      out.push({ name: header[1]!, value: header[2]!, index: i });
      const credential = AUTH_SCHEME.exec(header[2]!)?.[1];
      if (credential) out.push({ name: header[1]!, value: credential, index: i });
      return;
    }
    for (const found of urlSecrets(arg)) out.push({ ...found, index: i });
  });
  return out;
}

/**
 * Why a command line Brain starts from operator config shows a credential to every local user (ps,
 * /proc/PID/cmdline): one message for each argument that holds one once its `${VAR}`s are filled in, naming the
 * argument and how it is written (`--api-key`, `Authorization`, `url_password`), never the value. `where` names
 * the arguments (`mcp_servers.search.args`); `fix` says where the credential goes instead.
 */
export function argvCredentialWarnings(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  where: string,
  fix: string,
): string[] {
  const filled = args.map((arg) =>
    arg.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (ref, name: string) => env[name] ?? ref),
  );
  const seen = new Set<number>();
  const out: string[] = [];
  for (const { name, index } of argCredentials(filled)) {
    if (seen.has(index)) continue;
    seen.add(index);
    out.push(
      `${where}[${index}] puts a credential (${name}) on the command line, where every local user can read it (ps, /proc/PID/cmdline); ${fix}`,
    );
  }
  return out;
}

/**
 * A provider's credentials from the host's environment: the key from the variable `api_key_env` names. A client
 * that named a configured provider learns nothing about the host's variables from a refusal.
 */
export function credentialsFromEnv(
  settings: ProviderSettings | undefined,
  env: NodeJS.ProcessEnv,
  named?: string,
): ProviderCredentials {
  const out: ProviderCredentials = {};
  if (settings?.base_url) out.base_url = settings.base_url;
  if (settings?.api) out.api = settings.api;
  if (settings?.api_key_env) {
    const key = env[settings.api_key_env];
    if (!key) {
      // A client naming a configured provider learns nothing about the host's variables.
      throw new SessionError(
        "bad_request",
        named
          ? `provider "${named}" has no API key on this host: the operator must set the variable its api_key_env names`
          : `set the environment variable ${settings.api_key_env} to the provider's API key`,
      );
    }
    out.api_key = key;
  }
  return out;
}

/**
 * The credentials a URL holds written out: its password, and its secret-named query parameters (?api_key=,
 * ?token=), each as written in the URL and as the server gets it (percent-decoded). A part holding a `${VAR}`
 * is shown as written: the variable's value is redacted by name.
 */
function urlSecrets(url: string): Secret[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const found: Secret[] = [];
  const add = (name: string, raw: string) => {
    if (raw === "" || raw.includes("${") || raw.includes("%7B")) return;
    found.push({ name, value: raw });
    try {
      const decoded = decodeURIComponent(raw.replaceAll("+", " "));
      if (decoded !== raw) found.push({ name, value: decoded });
    } catch {
      // a malformed escape: the server gets it as written
    }
  };
  add("url_password", parsed.password);
  for (const pair of parsed.search.slice(1).split("&")) {
    const at = pair.indexOf("=");
    if (at > 0 && secretNamed(pair.slice(0, at))) add(pair.slice(0, at), pair.slice(at + 1));
  }
  return found;
}
