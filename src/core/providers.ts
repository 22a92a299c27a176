// The providers a Brain's sessions may name (brain.config.json `providers`), and the credentials a session gets.
import type { ProviderSettings } from "../protocol/config.js";
import type { ProviderCredentials } from "../protocol/runner.js";
import type { BrainOptions } from "./brain-options.js";
import { credentialsFromEnv } from "./credentials.js";
import { SessionError } from "./errors.js";

export class Providers {
  constructor(private readonly options: Pick<BrainOptions, "providers" | "credentials" | "env">) {}

  /** The configured providers' names, in config order. */
  names(): string[] {
    return Object.keys(this.options.providers ?? {});
  }

  /** A configured provider by name; an unknown name is the caller's mistake, answered with the known ones. */
  settings(name: string): ProviderSettings {
    // Own keys only: "constructor" or "__proto__" would otherwise name what every object has.
    const providers = this.options.providers ?? {};
    const settings = Object.hasOwn(providers, name) ? providers[name] : undefined;
    if (!settings) {
      const known = this.names().join(", ");
      // None at all is most often a config not read: a session made under a brain.config.json, then rebuilt,
      // checkpointed or run from another directory without --config.
      const configured = known
        ? `configured: ${known}`
        : `no providers are configured: they are brain.config.json's "providers", read from the working directory or --config FILE`;
      throw new SessionError("bad_request", `unknown provider "${name}" (${configured})`);
    }
    return settings;
  }

  /** What a session on `settings` gets: by default the key comes from `api_key_env`. */
  credentials(settings: ProviderSettings | undefined, named?: string): ProviderCredentials {
    if (this.options.credentials) return this.options.credentials(settings);
    return credentialsFromEnv(settings, this.options.env ?? process.env, named);
  }
}
