// `brain token`: the daemon's admin token, or a new one for a tenant or an observer.

import { PROVIDER_NAME } from "../../protocol/config.js";
import { addToken, DEFAULT_TENANT, loadOrCreateTokens, tokensPath } from "../../server/auth/tokens.js";
import { parse, refuseExtra, str, UsageError } from "../args.js";
import { loadConfig } from "../config.js";
import { brainHome } from "../setup.js";

export const usage = `token [add [--tenant T] [--observer] [--name N] [--providers A,B]]
                              print the daemon's token, or add a token for a tenant or an observer
                              (--providers: the configured providers its sessions may use; default all)`;

export const verbs = ["add"] as const;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    tenant: { type: "string" },
    observer: { type: "boolean" },
    name: { type: "string" },
    providers: { type: "string" },
  });
  const home = brainHome();
  const [verb] = positionals;
  refuseExtra(positionals, 1, "token takes only the verb add (its settings are flags: --tenant T, …)");
  if (verb === undefined) {
    const { file, created } = loadOrCreateTokens(home);
    if (created) process.stderr.write(`created ${tokensPath(home)} (mode 0600)\n`);
    process.stdout.write(`${file.tokens[0]!.token}\n`);
    return 0;
  }
  if (verb !== "add")
    throw new UsageError(`unknown token verb "${verb}": use \`brain token\` or \`brain token add\``);
  const tenant = str(values.tenant) ?? DEFAULT_TENANT;
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(tenant)) {
    throw new UsageError(`--tenant takes 1 to 64 letters, digits, '_', '.' or '-', not "${tenant}"`);
  }
  const role = values.observer === true ? "observer" : "controller";
  const name = str(values.name);
  const listed = str(values.providers);
  const providers =
    listed === undefined
      ? undefined
      : listed
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean);
  for (const provider of providers ?? []) {
    if (!PROVIDER_NAME.test(provider)) {
      throw new UsageError(
        `--providers takes provider names from brain.config.json "providers", comma-separated; "${provider}" is not one`,
      );
    }
  }
  if (providers) checkConfigured(providers, str(values.config));
  const entry = addToken(home, {
    tenant,
    role,
    ...(name ? { name } : {}),
    ...(providers ? { providers } : {}),
  });
  process.stdout.write(`${entry.token}\n`);
  process.stderr.write(
    `added ${role === "observer" ? "an" : "a"} ${role} token of tenant "${tenant}"${providers ? ` (providers: ${providers.join(", ") || "none"})` : ""} to ${tokensPath(home)}; restart the daemon to use it\n`,
  );
  return 0;
}

/**
 * A name no config configures would be granted silently and never work. The daemon's config is the one beside the
 * command (or --config); without one the names cannot be checked, which is said rather than passed over.
 */
function checkConfigured(providers: string[], explicit: string | undefined): void {
  const loaded = loadConfig(explicit);
  if (!loaded.file) {
    process.stderr.write(
      "no brain.config.json here: the --providers names were not checked (run this beside the daemon's config, or give --config)\n",
    );
    return;
  }
  const known = Object.keys(loaded.config.providers ?? {});
  const unknown = providers.filter((p) => !known.includes(p));
  if (unknown.length > 0) {
    throw new UsageError(
      `--providers names ${unknown.map((p) => `"${p}"`).join(", ")}, not in ${loaded.file} "providers" (configured: ${known.join(", ") || "none"})`,
    );
  }
}
