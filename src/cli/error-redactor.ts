// What the `brain` command keeps out of the errors it prints: every secret a Brain made from the same config would
// redact, not only the secret-named variables (a provider key may sit in any variable its api_key_env names).
import { envSecrets, Redactor } from "../core/redact.js";

/** The value of `--config FILE` or `--config=FILE` among a command's words (before a `--`, as parseArgs reads). */
function configArg(args: string[]): string | undefined {
  const end = args.indexOf("--");
  const words = end < 0 ? args : args.slice(0, end);
  let found: string | undefined;
  words.forEach((word, i) => {
    if (word === "--config") found = words[i + 1];
    else if (word.startsWith("--config=")) found = word.slice("--config=".length);
  });
  return found;
}

export async function errorRedactor(args: string[]): Promise<Redactor> {
  const secrets = envSecrets(process.env);
  try {
    // Loaded only when an error is printed: a command that succeeds never pays for the config schema twice.
    const { loadConfig } = await import("./config.js");
    const { brainHome, configSecrets } = await import("./setup.js");
    secrets.push(...configSecrets(loadConfig(configArg(args)), brainHome()));
  } catch {
    // A config that does not load names no variable to add (the error printed may be its own): the
    // secret-named variables are still kept out.
  }
  return new Redactor(secrets);
}
