// Loads the CLI's CommonJS bundle (dist/cli/, scripts/bundle-cli.mjs) with V8's code cache: each chunk is
// compiled from the bytecode saved next to it at build time (<chunk>.cache) instead of from its source. Node 20
// has no compile cache of its own (module.enableCompileCache came in Node 22) and its ES module loader takes none.
// Measured against the ES module bundle, alternating runs of `brain run "hello"` on a loaded machine: 608 → 541 ms
// of CPU (runner included), about half from the cache and half from loading CommonJS instead of ES modules. A
// cache V8 rejects (another Node, other V8 flags) or a missing one costs only the compile it would have saved.
// Chunks are ordinary CommonJS modules (in require.cache, with their own require for packages); only their
// compilation differs.
const { readFileSync, writeFileSync } = require("node:fs");
const Module = require("node:module");
const { dirname, join } = require("node:path");
const vm = require("node:vm");

/** Set (by the build) to the directory whose chunks get a .cache written at exit. */
const WRITE_ENV = "BRAIN_WRITE_CODE_CACHE";

/** Loads `file` (a chunk of the bundle in `dir`) and the chunks it requires; returns its exports. */
function loadBundle(file) {
  const dir = dirname(file);
  const compiled = [];
  const load = (path, parent) => {
    const cached = Module._cache[path];
    if (cached) return cached.exports;
    const module = new Module(path, parent);
    module.filename = path;
    module.paths = Module._nodeModulePaths(dirname(path));
    Module._cache[path] = module;
    const source = readFileSync(path, "utf8");
    let cachedData;
    try {
      cachedData = readFileSync(`${path}.cache`);
    } catch {
      // Not built with a cache (or removed): compiled from the source.
    }
    const script = new vm.Script(Module.wrap(source), { filename: path, cachedData });
    compiled.push({ path, script });
    const outside = Module.createRequire(path);
    // The bundle's chunks name each other "./chunk.js"; anything else is a package or a Node module.
    const require = (id) => (id.startsWith("./") ? load(join(dir, id), module) : outside(id));
    require.resolve = outside.resolve;
    require.cache = Module._cache;
    script.runInThisContext().call(module.exports, module.exports, require, module, path, dir);
    module.loaded = true;
    return module.exports;
  };
  if (process.env[WRITE_ENV] === dir) {
    // After the run, so the cache holds every function it compiled, not only each chunk's top level.
    process.on("exit", () => {
      for (const { path, script } of compiled) writeFileSync(`${path}.cache`, script.createCachedData());
    });
  }
  return load(file, module);
}

module.exports = { loadBundle, WRITE_ENV };
