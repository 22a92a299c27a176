// $CODEX_HOME/config.toml for one session: which model and endpoint, and no update checks or analytics. The
// key never goes in the file: Codex reads it from the variable `env_key` names.
import type { ProviderCredentials, SessionConfig } from "../../protocol/runner.js";

export const KEY_VARIABLE = "BRAIN_CODEX_API_KEY";

/** A TOML basic string: JSON's escapes are a subset of TOML's. */
const str = (value: string) => JSON.stringify(value);

/** `bound`: bound mode's top-level keys and tables (./bound.ts). */
export function codexConfigToml(
  config: SessionConfig,
  provider: ProviderCredentials,
  bound?: { topLevel: string[]; tables: string[] },
): string {
  const lines: string[] = ["# Written by Brain for this session; rewritten whenever Codex starts."];
  lines.push(...(bound?.topLevel ?? []));
  if (config.model) lines.push(`model = ${str(config.model)}`);
  if (provider.base_url) lines.push('model_provider = "brain"');
  lines.push("check_for_update_on_startup = false", "");
  if (provider.base_url) {
    lines.push(
      "[model_providers.brain]",
      'name = "Brain provider"',
      `base_url = ${str(provider.base_url)}`,
      'wire_api = "responses"',
      `env_key = ${str(KEY_VARIABLE)}`,
      "",
    );
  }
  lines.push("[analytics]", "enabled = false", "");
  lines.push(...(bound?.tables ?? []));
  return lines.join("\n");
}

/** The environment that carries the key: our own variable for a custom endpoint, OpenAI's for the default one. */
export function keyEnvironment(provider: ProviderCredentials): Record<string, string> {
  if (!provider.api_key) return {};
  return provider.base_url ? { [KEY_VARIABLE]: provider.api_key } : { OPENAI_API_KEY: provider.api_key };
}
