// Loads brain.config.json (from the working dir, or --config FILE). Every error names the file, the field and
// what is wrong.
import { existsSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { builtinCatalog, catalogConfigSchema } from "../harnesses/catalog.js";
import type { Catalog } from "../harnesses/family.js";
import type { BrainConfig } from "../protocol/config.js";
import { configFile } from "./config-file.js";
import { ConfigError } from "./errors.js";

export { ConfigError };

export interface LoadedConfig {
  config: BrainConfig;
  /** The file it came from, or undefined when there was none and the defaults apply. */
  file?: string;
  /** Relative runner paths resolve against this directory. */
  dir: string;
}

/** Checked against the catalog's families: their settings blocks are strict, naming an unknown family or field. */
export function loadConfig(
  explicit: string | undefined,
  cwd = process.cwd(),
  catalog: Catalog = builtinCatalog(),
): LoadedConfig {
  const file = configFile(explicit, cwd);
  if (!existsSync(file)) {
    if (explicit) throw new ConfigError(`${explicit}: no such config file`);
    return { config: {}, dir: cwd };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ConfigError(`${file}: not valid JSON: ${(err as Error).message}`);
  }
  const parsed = catalogConfigSchema(catalog).safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const field = issue.path.join(".") || "(top level)";
      return `field "${field}": ${issue.message}`;
    });
    throw new ConfigError(`${file}: ${problems.join("; ")}`);
  }
  return { config: parsed.data as BrainConfig, file, dir: dirname(file) };
}
