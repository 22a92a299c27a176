#!/usr/bin/env node
// Bundles the compiled CLI (dist/src/cli/main.js, from tsc) into dist/cli/: bin/brain.js then loads a few files
// instead of ~225 modules (95 of them zod's), whose resolution and loading was most of `brain run`'s start-up.
// Dynamic imports stay lazy (each command, harness family, the AI SDK, Hono, MCP get chunks of their own), so a
// run on the echo runner parses none of them. Among packages only zod, which `brain run` loads at start, and the
// ACP SDK, which ships only as ES modules, are bundled: the others load lazily or not at all on start-up, stay
// resolved from node_modules (their CommonJS builds), and a package that finds its files from its own location
// keeps working. dist/cli/modules.json lists the modules in each chunk (the start-up test reads it). Run by
// `npm run build` after tsc.
//
// The chunks are CommonJS, so that bin/load-bundle.js can compile them from V8's code cache (Node 20's ES module
// loader takes none): after bundling, a `brain --help` and a `brain run` on the echo runner, in a throwaway home,
// leave each chunk they loaded a <chunk>.cache with the bytecode of every function they ran.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { rolldown } from "rolldown";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/cli");
/** Bundled packages: zod, and the ACP SDK, so that no chunk needs require() of an ES module (Node 20.19+). */
const BUNDLED = /^(zod|@agentclientprotocol\/sdk)(\/|$)/;

/** Bundles `input` into CommonJS chunks in `dir`; packages stay require()d from node_modules unless `bundled`. */
async function bundleCjs(input, dir, bundled) {
  rmSync(dir, { recursive: true, force: true });
  const bundle = await rolldown({
    input: { main: input },
    platform: "node",
    external: (id, importer) => !id.startsWith(".") && !id.startsWith("/") && !!importer && !bundled.test(id),
    logLevel: "warn",
  });
  const { output } = await bundle.write({
    dir,
    format: "cjs",
    // A package imported lazily is require()d lazily: code compiled by vm.Script cannot run import().
    dynamicImportInCjs: false,
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    sourcemap: false,
  });
  await bundle.close();
  writeFileSync(join(dir, "package.json"), '{\n  "type": "commonjs"\n}\n');
  const chunks = output.filter((chunk) => chunk.type === "chunk");
  for (const chunk of chunks) {
    if (/\bimport\(/.test(readFileSync(join(dir, chunk.fileName), "utf8")))
      throw new Error(
        `${relative(root, dir)}/${chunk.fileName} kept an import(): bin/load-bundle.js cannot run it`,
      );
  }
  return chunks;
}

const modules = {};
for (const chunk of await bundleCjs(join(root, "dist/src/cli/main.js"), out, BUNDLED)) {
  modules[chunk.fileName] = chunk.moduleIds.map((id) => {
    const at = id.lastIndexOf("/node_modules/");
    return at >= 0 ? id.slice(at + 1) : relative(root, id);
  });
}
writeFileSync(join(out, "modules.json"), `${JSON.stringify(modules, null, 1)}\n`);

// The echo runner, which `brain run` starts by default (src/harnesses/process/runner-paths.ts), as one CommonJS
// file: Node 20's ES module loader, loading it as tsc writes it (8 modules), was about 30 ms of its 195 ms of CPU
// to start (alternating runs, loaded machine), and the runner's start is what a short `brain run` waits for.
// runners/echo/main.ts stays the readable example; zod (the SDK's check of a frame it cannot read) stays lazy.
await bundleCjs(join(root, "dist/runners/echo/main.js"), join(root, "dist/runners/echo/bundle"), /^$/);

// The code cache: --help loads every command's chunk, then the run writes the chunks it loads again, with the
// functions a run compiles.
const scratch = mkdtempSync(join(tmpdir(), "brain-code-cache-"));
try {
  for (const args of [["--help"], ["run", "hello"]]) {
    const result = spawnSync(process.execPath, [join(root, "bin/brain.js"), ...args], {
      cwd: scratch,
      env: {
        ...process.env,
        BRAIN_HOME: join(scratch, "home"),
        BRAIN_URL: "",
        BRAIN_TOKEN: "",
        BRAIN_WRITE_CODE_CACHE: out,
      },
      encoding: "utf8",
      input: "",
      timeout: 60_000,
    });
    if (result.status !== 0)
      throw new Error(`brain ${args.join(" ")} (for the code cache) failed: ${result.stderr}`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
