// A tool's input schema comes from whoever serves the tool (an MCP server, an HTTP endpoint): untrusted. Its regex
// keywords would run on JavaScript's backtracking RegExp inside the daemon, where a pattern such as ^(a+)+$ and
// a model-chosen argument freeze the event loop for every session (ReDoS). Brain checks arguments to catch a
// model's mistakes early, not to protect the tool: the server that owns the tool checks its own input. So the
// regex checks are left to it and every other check stays.
//
// Not a linear-time engine instead: none ships with Node 20, RE2's syntax is not ECMA-262's (no lookaround or
// backreferences, which JSON Schema patterns may use), and an install-time native build is one more thing to
// break. Dropping a check can only let a call through to the server, never refuse a valid one.
import type { Options } from "ajv";

type RegExpEngine = NonNullable<NonNullable<Options["code"]>["regExp"]>;

/** Keywords whose value is data, not a schema: left as they are. */
const VALUES = new Set(["const", "enum", "default", "examples"]);
/** Keywords whose value maps names (not keywords) to subschemas, or in `dependencies` also to name lists. */
const MAPS = new Set(["properties", "$defs", "definitions", "dependentSchemas", "dependencies"]);
/** Keywords whose meaning depends on `patternProperties`: which properties they cover. */
const BESIDE_PATTERNS = new Set(["patternProperties", "additionalProperties", "unevaluatedProperties"]);

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A copy of a JSON Schema without `pattern` and `patternProperties` anywhere in it. Where `patternProperties`
 * went, `additionalProperties` and `unevaluatedProperties` of the same schema go too: which properties they
 * cover depends on the patterns. Values (`const`, `enum`, `default`, `examples`) are left as they are.
 * Every member is walked, not only the keywords known to hold subschemas: a `$ref` can point anywhere in the
 * document (`#/anything`), and Ajv knows keywords (`dependencies`) a list would miss.
 */
export function withoutPatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutPatterns);
  if (!isSchema(schema)) return schema;
  const patterned = isSchema(schema.patternProperties);
  const kept: [string, unknown][] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "pattern" && typeof value === "string") continue;
    if (patterned && BESIDE_PATTERNS.has(key)) continue;
    if (VALUES.has(key)) kept.push([key, value]);
    else if (MAPS.has(key) && isSchema(value))
      kept.push([
        key,
        Object.fromEntries(Object.entries(value).map(([n, sub]) => [n, withoutPatterns(sub)])),
      ]);
    else kept.push([key, withoutPatterns(value)]);
  }
  // fromEntries defines each member: a "__proto__" key stays a member instead of becoming the prototype.
  return Object.fromEntries(kept);
}

/**
 * Ajv's regex engine for schemas from a tool's server: every pattern matches. What withoutPatterns cannot reach
 * (a `$ref` into a value such as `#/enum/0`) still never runs on Brain's loop; such a pattern is left to the
 * server like the rest.
 */
export const UNCHECKED_PATTERNS: RegExpEngine = Object.assign(
  (pattern: string) => ({ test: () => true, toString: () => pattern }),
  { code: "brainUncheckedPattern" },
);

/**
 * `ajv` without its `uniqueItems` check, left to the tool's server like the patterns: unless the items are declared
 * of one scalar type, Ajv compares every pair of them, so 40,000 small arrays (300 KB of a model's arguments, or of
 * a server's structured result) held the daemon's loop for half a minute, and a runner's 4 MiB frame for hours.
 * Removed from Ajv rather than from the schema, it is checked nowhere, also where a `$ref` into a value reaches.
 * (With `strict: false`, the keyword is then unknown and ignored.)
 */
export function withoutUniqueItems<T extends { removeKeyword(keyword: string): unknown }>(ajv: T): T {
  ajv.removeKeyword("uniqueItems");
  return ajv;
}
