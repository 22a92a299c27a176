// A tool's input schema comes from whoever serves the tool (an MCP server, an HTTP endpoint): untrusted. Its regex
// keywords would run on JavaScript's backtracking RegExp inside the daemon, where a pattern such as ^(a+)+$ and
// a model-chosen argument freeze the event loop for every session (ReDoS). Brain checks arguments to catch a
// model's mistakes early, not to protect the tool: the server that owns the tool checks its own input. So the
// regex checks are left to it and every other check stays.
//
// Not a linear-time engine instead: none ships with Node 20, RE2's syntax is not ECMA-262's (no lookaround or
// backreferences, which JSON Schema patterns may use), and an install-time native build is one more thing to
// break. Dropping a check can only let a call through to the server, never refuse a valid one.

/** Keywords whose value is one subschema. */
const ONE = [
  "additionalProperties",
  "unevaluatedProperties",
  "items",
  "additionalItems",
  "unevaluatedItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
];
/** Keywords whose value is a list of subschemas. */
const LIST = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/** Keywords whose value maps names to subschemas. */
const MAP = ["properties", "$defs", "definitions", "dependentSchemas"];

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A copy of a JSON Schema without `pattern` and `patternProperties` anywhere in it. Where `patternProperties`
 * went, `additionalProperties` and `unevaluatedProperties` of the same schema go too: which properties they
 * cover depends on the patterns. Values (`const`, `enum`, `default`, `examples`) are left as they are.
 */
export function withoutPatterns(schema: unknown): unknown {
  if (!isSchema(schema)) return schema;
  const out: Schema = { ...schema };
  if (typeof out.pattern === "string") delete out.pattern;
  if (isSchema(out.patternProperties)) {
    delete out.patternProperties;
    delete out.additionalProperties;
    delete out.unevaluatedProperties;
  }
  for (const key of ONE) if (isSchema(out[key])) out[key] = withoutPatterns(out[key]);
  for (const key of LIST) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map(withoutPatterns);
  }
  for (const key of MAP) {
    const map = out[key];
    if (isSchema(map))
      out[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, withoutPatterns(sub)]));
  }
  return out;
}
