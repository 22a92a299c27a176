#!/usr/bin/env node
// Bundles the compiled CLI (dist/src/cli/main.js, from tsc) into dist/cli/: bin/brain.js then loads a few files
// instead of ~225 modules (95 of them zod's), whose resolution and loading was most of `brain run`'s start-up.
// Dynamic imports stay dynamic (each command, harness family, the AI SDK, Hono, MCP get chunks of their own), so a
// run on the echo runner parses none of them. Only zod is bundled among packages: the others load lazily or not at
// all on start-up, stay resolved from node_modules, and a package that finds its files from its own location keeps
// working. dist/cli/modules.json lists the modules in each chunk (the start-up test reads it). Run by
// `npm run build` after tsc.
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { rolldown } from "rolldown";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/cli");
/** Bundled packages: the ones `brain run` loads at start. */
const BUNDLED = /^zod(\/|$)/;

rmSync(out, { recursive: true, force: true });
const bundle = await rolldown({
  input: { main: join(root, "dist/src/cli/main.js") },
  platform: "node",
  external: (id, importer) => !id.startsWith(".") && !id.startsWith("/") && !!importer && !BUNDLED.test(id),
  logLevel: "warn",
});
const { output } = await bundle.write({
  dir: out,
  format: "esm",
  entryFileNames: "[name].js",
  chunkFileNames: "[name]-[hash].js",
  sourcemap: false,
});
await bundle.close();
const modules = {};
for (const chunk of output) {
  if (chunk.type !== "chunk") continue;
  modules[chunk.fileName] = chunk.moduleIds.map((id) => {
    const at = id.lastIndexOf("/node_modules/");
    return at >= 0 ? id.slice(at + 1) : relative(root, id);
  });
}
writeFileSync(join(out, "modules.json"), `${JSON.stringify(modules, null, 1)}\n`);
