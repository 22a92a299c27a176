// brain.config.json: the runner harnesses (seed A's "harnesses" block) and the defaults of new sessions.
import { z } from "zod";
import { PermissionPolicy } from "./permissions.js";
import { SessionConfig } from "./runner.js";

export const HarnessEntry = z.strictObject({
  /** The runner's command line: an array, or a string split on spaces (quotes group words). */
  command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
  /** Variables added to the runner's minimal environment. Never put provider keys here. */
  env: z.record(z.string(), z.string()).optional(),
  /** One process serves every session of this harness, one attachment each. */
  shared: z.boolean().optional(),
  steering: z.boolean().optional(),
});

/** Where the model is. The key itself is read from the environment variable `api_key_env`, never stored. */
export const ProviderSettings = z.strictObject({
  base_url: z.string().optional(),
  api: z.string().optional(),
  api_key_env: z.string().optional(),
});

export const SessionDefaults = SessionConfig.extend({
  harness: z.string().optional(),
  provider: ProviderSettings.optional(),
  permissions: PermissionPolicy.optional(),
});

export const BrainConfig = z.strictObject({
  $schema: z.string().optional(),
  harnesses: z.record(z.string(), HarnessEntry).optional(),
  defaults: SessionDefaults.optional(),
});

export type HarnessEntry = z.infer<typeof HarnessEntry>;
export type ProviderSettings = z.infer<typeof ProviderSettings>;
export type SessionDefaults = z.infer<typeof SessionDefaults>;
export type BrainConfig = z.infer<typeof BrainConfig>;
