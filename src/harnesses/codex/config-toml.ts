// $CODEX_HOME/config.toml for one session: which model and endpoint, and no update checks or analytics. The
// key never goes in the file: Codex reads it from the variable `env_key` names.
import { HarnessError } from "../../core/harness.js";
import type { ProviderCredentials, SessionConfig } from "../../protocol/runner.js";

export const KEY_VARIABLE = "BRAIN_CODEX_API_KEY";

const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * `value` as a TOML basic string, `what` naming it for the error. JSON's escapes are TOML's too, but JSON leaves
 * DEL raw, which TOML refuses, and writes a lone surrogate as \uD800, which TOML refuses too (its \u names a
 * Unicode scalar value). Given either, Codex fails every thread with "failed to load configuration:
 * …/config.toml:2:16: invalid value", a file the client never saw. A lone surrogate is refused, not replaced:
 * it is in no real name, and a U+FFFD in its place would send a name the client never set.
 */
export function tomlString(value: string, what: string): string {
  if (LONE_SURROGATE.test(value)) {
    throw new HarnessError(
      "brain_error",
      `${what} holds a lone surrogate (half of a UTF-16 pair, U+D800 to U+DFFF), which Codex's config.toml cannot hold: send it as valid Unicode`,
    );
  }
  return JSON.stringify(value).replaceAll("\x7f", "\\u007f");
}

/** `bound`: bound mode's top-level keys and tables (./bound.ts). */
export function codexConfigToml(
  config: SessionConfig,
  provider: Pick<ProviderCredentials, "base_url">,
  bound?: { topLevel: string[]; tables: string[] },
): string {
  const lines: string[] = ["# Written by Brain for this session; rewritten whenever Codex starts."];
  lines.push(...(bound?.topLevel ?? []));
  if (config.model) lines.push(`model = ${tomlString(config.model, "the session's model (config.model)")}`);
  if (provider.base_url) lines.push('model_provider = "brain"');
  lines.push("check_for_update_on_startup = false", "");
  if (provider.base_url) {
    lines.push(
      "[model_providers.brain]",
      'name = "Brain provider"',
      `base_url = ${tomlString(provider.base_url, "the provider's base_url")}`,
      'wire_api = "responses"',
      `env_key = "${KEY_VARIABLE}"`,
      "",
    );
  }
  lines.push("[analytics]", "enabled = false", "");
  lines.push(...(bound?.tables ?? []));
  return lines.join("\n");
}

/** The environment that carries the key: our own variable for a custom endpoint, OpenAI's for the default one. */
export function keyEnvironment(
  provider: Pick<ProviderCredentials, "base_url" | "api_key">,
): Record<string, string> {
  if (!provider.api_key) return {};
  return provider.base_url ? { [KEY_VARIABLE]: provider.api_key } : { OPENAI_API_KEY: provider.api_key };
}
