// The Codex app-server protocol types, generated from the installed binary (`codex app-server generate-ts`) and
// committed under ./generated. The generator's relative imports get explicit `.js` extensions (NodeNext ESM
// needs them) and the files are formatted with the project's Biome settings, so the committed tree passes lint.
// A test regenerates into a temporary dir and diffs, so an upgrade of @openai/codex that changes the protocol
// fails CI until the types are regenerated:
//
//   node dist/src/harnesses/codex/protocol-gen.js        (writes src/harnesses/codex/generated)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { locateCli } from "../cli/locate.js";

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, here.includes(`${sep}dist${sep}`) ? "../../../.." : "../../..");
export const PROTOCOL_DIR = join(projectRoot, "src/harnesses/codex/generated");

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}

/** `from "./X"` → `from "./X.js"`, and a directory import → `./dir/index.js`. */
export function withExtensions(source: string, fileDir: string): string {
  return source.replace(/from "(\.{1,2}\/[^"]+)"/g, (_all, spec: string) => {
    if (spec.endsWith(".js")) return `from "${spec}"`;
    const target = resolve(fileDir, spec);
    const isDir = existsSync(target) && statSync(target).isDirectory();
    return `from "${spec}${isDir ? "/index.js" : ".js"}"`;
  });
}

/**
 * Generates the protocol types of the installed codex into a new temporary directory and returns it. `launcher`
 * goes in front of codex (the test runs it in a network namespace).
 */
export function generateProtocol(launcher: string[] = [], codex = locateCli("codex")): string {
  if (!codex) throw new Error('the "codex" program was not found; install @openai/codex');
  const out = mkdtempSync(join(tmpdir(), "codex-protocol-"));
  const home = mkdtempSync(join(tmpdir(), "codex-home-"));
  const [command, ...args] = [...launcher, codex, "app-server", "generate-ts", "--out", out];
  try {
    execFileSync(command!, args, {
      env: { PATH: process.env.PATH ?? "", HOME: home, CODEX_HOME: home },
      stdio: ["ignore", "ignore", "pipe"],
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  for (const file of walk(out))
    writeFileSync(file, withExtensions(readFileSync(file, "utf8"), dirname(file)));
  // Biome refuses paths outside its project root, so the temporary dir gets the project's settings, minus VCS.
  const config = JSON.parse(readFileSync(join(projectRoot, "biome.json"), "utf8"));
  delete config.vcs;
  delete config.$schema;
  writeFileSync(join(out, "biome.json"), JSON.stringify(config));
  execFileSync(join(projectRoot, "node_modules/.bin/biome"), ["check", "--write", "--log-level=none", "."], {
    cwd: out,
    stdio: "ignore",
  });
  rmSync(join(out, "biome.json"));
  return out;
}

/** Relative paths whose contents differ between two trees (added, removed or changed). */
export function diffTrees(a: string, b: string): string[] {
  const files = (dir: string) => new Map(walk(dir).map((f) => [relative(dir, f), readFileSync(f, "utf8")]));
  const left = files(a);
  const right = files(b);
  const names = new Set([...left.keys(), ...right.keys()]);
  return [...names].filter((name) => left.get(name) !== right.get(name)).sort();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fresh = generateProtocol();
  rmSync(PROTOCOL_DIR, { recursive: true, force: true });
  execFileSync("cp", ["-r", fresh, PROTOCOL_DIR]);
  rmSync(fresh, { recursive: true, force: true });
  process.stdout.write(`wrote ${PROTOCOL_DIR}\n`);
}
