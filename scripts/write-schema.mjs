#!/usr/bin/env node
// Rewrites schema/*.json from src/protocol (run after `npm run build`; `npm test` fails when they are stale).
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateSchemas } from "../dist/src/protocol/json-schema.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "schema");
for (const [file, text] of Object.entries(generateSchemas())) {
  writeFileSync(join(dir, file), text);
  console.log(`wrote schema/${file}`);
}
