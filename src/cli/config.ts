// Loads brain.config.json (from the working dir, or --config FILE). Every error names the file, the field and
// what is wrong.
import { existsSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ZodType, z } from "zod";
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
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    // A directory or an unreadable file: its JSON was never read, so "not valid JSON" would send one looking there.
    throw new ConfigError(`${file}: cannot be read (${(err as Error).message}): give --config a JSON file`);
  }
  let raw: unknown;
  try {
    // A byte-order mark (some Windows editors save one) is not JSON; what follows it is.
    raw = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    throw new ConfigError(`${file}: not valid JSON: ${(err as Error).message}`);
  }
  const schema = catalogConfigSchema(catalog);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => describeIssue(issue, schema));
    throw new ConfigError(`${file}: ${problems.join("; ")}`);
  }
  return { config: parsed.data as BrainConfig, file, dir: dirname(file) };
}

/** One problem, saying what the field takes: zod's own text for a union or an unknown key names no fix. */
function describeIssue(issue: z.core.$ZodIssue, schema: ZodType, at: PropertyKey[] = []): string {
  const path = [...at, ...issue.path];
  const field = path.map(String).join(".") || "(top level)";
  if (issue.code === "unrecognized_keys") {
    const known = keysAt(schema, path);
    const names = issue.keys.map((key) => `"${[...path, key].join(".")}"`).join(", ");
    return `unknown field ${names}${known?.length ? `: the fields here are ${known.join(", ")}` : ": remove it"}`;
  }
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // The alternative that got furthest into the value says what is wrong inside it; if none got past the value
    // itself, the value is none of the types the field takes.
    const depth = (alt: z.core.$ZodIssue[]) => Math.max(0, ...alt.map((i) => i.path.length));
    const deepest = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    if (depth(deepest) > 0 && deepest[0]) return describeIssue(deepest[0], schema, path);
    const expected = issue.errors.flatMap((alt) =>
      alt.flatMap((i) => (i.code === "invalid_type" ? [i.expected] : [])),
    );
    if (expected.length === issue.errors.length) return `field "${field}": expected ${expected.join(" or ")}`;
  }
  return `field "${field}": ${issue.message}`;
}

/** The field names the schema takes at `path` (through optional, default and record wrappers), if it is an object. */
function keysAt(schema: ZodType, path: PropertyKey[]): string[] | undefined {
  let node: z.core.$ZodType | undefined = schema;
  for (let i = 0; node && i <= path.length; ) {
    const def: Record<string, unknown> & { type: string } = node._zod.def as never;
    if ("innerType" in def) node = def.innerType as z.core.$ZodType;
    else if (def.type === "object") {
      const shape = def.shape as Record<string, z.core.$ZodType>;
      if (i === path.length) return Object.keys(shape);
      node = shape[String(path[i++])];
    } else if (def.type === "record" && i < path.length) {
      node = def.valueType as z.core.$ZodType;
      i++;
    } else return undefined;
  }
  return undefined;
}
