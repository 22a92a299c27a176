// A CLI session's extra flags (config.options.args) are the CLI's command line, which every local user can read
// (ps, /proc/PID/cmdline). A credential there works, so the CLI starts as before and the session's log says so.
import { argvCredentialWarnings } from "../../core/credentials.js";
import type { CliSessionOptions } from "./options.js";

/** One warning for each flag that holds a credential, naming it and where the key goes instead, never the key. */
export function argsWarnings(harness: string, session: CliSessionOptions): string[] {
  const fix = `Brain starts the ${harness} CLI with it. Give it in brain.config.json cli.${harness}.env instead (a variable the CLI reads), or as a provider's api_key_env`;
  return argvCredentialWarnings(session.args ?? [], {}, "config.options.args", fix).map(
    (message) => `${harness}: ${message}`,
  );
}
