// A tool's outputSchema comes from its server: untrusted, as its input schema is (../schema-patterns.ts). The MCP
// client checks every structured result against it on Brain's loop, where a pattern such as ^(a+)+$ and a result
// to match freeze every session (ReDoS); and it compiles every tool's output schema as it lists the tools, so one
// schema Ajv cannot compile failed the whole server's start. So here too the regex checks are left to the server,
// and a schema that does not compile checks nothing: Brain reads a result as text either way. Formats are regex
// checks too (the SDK's default instance adds ajv-formats'): left to the server with the rest, as is `uniqueItems`
// (quadratic in a result's array: withoutUniqueItems).

import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";
import { Ajv } from "ajv";
import { UNCHECKED_PATTERNS, withoutPatterns, withoutUniqueItems } from "../schema-patterns.js";

export class OutputSchemaChecks implements jsonSchemaValidator {
  private readonly ajv = new AjvJsonSchemaValidator(
    withoutUniqueItems(
      new Ajv({
        strict: false,
        validateFormats: false,
        validateSchema: false,
        allErrors: true,
        code: { regExp: UNCHECKED_PATTERNS },
      }),
    ),
  );

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    try {
      return this.ajv.getValidator<T>(withoutPatterns(schema) as JsonSchemaType);
    } catch {
      return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
    }
  }
}
