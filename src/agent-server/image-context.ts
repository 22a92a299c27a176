// What a CLI family's agent image carries (docker/agent-deps.Dockerfile, docker/agent-server.Dockerfile), and the
// hash that names it, so scripts/agent-images.sh rebuilds an image exactly when what goes into it changed:
//   node dist/src/agent-server/image-context.js deps <family> [dir]   Brain's runtime dependencies, then the
//       family's pinned CLI package, each with what it needs, as package-lock.json resolves them on this install
//   node dist/src/agent-server/image-context.js app [dir]             Brain's build: package.json, dist/src, dist/sdk
// Each prints its hash; with a dir, it also fills it as the build's context (hard links where it can).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { CLAUDE_CODE } from "../harnesses/claude-code/factory.js";
import type { CliFamily } from "../harnesses/cli/family.js";
import { CODEX } from "../harnesses/codex/factory.js";
import { isMain } from "../harnesses/exec-relay.js";
import { installDir } from "../harnesses/nui/install-paths.js";
import { OPENCODE } from "../harnesses/opencode/factory.js";
import { PI_CLI } from "../harnesses/pi-cli/factory.js";

export const IMAGE_FAMILIES: readonly CliFamily[] = [CLAUDE_CODE, CODEX, OPENCODE, PI_CLI];

/** package-lock.json's `packages` (lockfile version 2 or 3): install paths ("node_modules/a/node_modules/b"). */
export type LockPackages = Record<
  string,
  {
    version?: string;
    integrity?: string;
    link?: boolean;
    bin?: Record<string, string> | string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  }
>;

/**
 * The install paths of `roots` and everything they need, resolved as Node does (the nearest node_modules up the
 * tree). `installed` says whether a path is on disk: an optional dependency for another platform is not.
 */
export function lockClosure(
  packages: LockPackages,
  roots: string[],
  installed: (path: string) => boolean,
): Set<string> {
  const resolve = (from: string, name: string): string | undefined => {
    for (let base = from; ; ) {
      const path = `${base ? `${base}/` : ""}node_modules/${name}`;
      if (packages[path] && !packages[path].link && installed(path)) return path;
      if (!base) return undefined;
      const up = base.lastIndexOf("/node_modules/");
      base = up < 0 ? "" : base.slice(0, up);
    }
  };
  const found = new Set<string>();
  const unvisited = roots.map((name) => {
    const path = resolve("", name);
    if (!path) throw new Error(`${name} is not installed: run npm ci (package-lock.json pins it)`);
    return path;
  });
  for (let path = unvisited.pop(); path !== undefined; path = unvisited.pop()) {
    if (found.has(path)) continue;
    found.add(path);
    const entry = packages[path] ?? {};
    const names = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies };
    for (const name of Object.keys(names)) {
      const dep = resolve(path, name);
      if (dep) unvisited.push(dep);
    }
  }
  return found;
}

/** The paths to copy: those not already inside another one (a package's directory holds its nested ones). */
export function outermost(paths: Iterable<string>, within: Set<string> = new Set()): string[] {
  const all = [...paths].sort();
  const kept: string[] = [];
  for (const path of all) {
    const inside = (outer: string) => path === outer || path.startsWith(`${outer}/`);
    if (kept.some(inside) || [...within].some(inside)) continue;
    kept.push(path);
  }
  return kept;
}

export interface DepsPlan {
  /** Brain's runtime dependencies (one layer, the same for every family). */
  runtime: string[];
  /** The family's CLI package, what it needs beyond the runtime layer, and its program in node_modules/.bin. */
  cli: string[];
  hash: string;
}

/** Where the install's node_modules really is (a worktree may link another checkout's). */
function modulesParent(root: string): string {
  return dirname(realpathSync(join(root, "node_modules")));
}

export function depsPlan(family: string, root = installDir()): DepsPlan {
  const cli = IMAGE_FAMILIES.find((f) => f.harness === family);
  if (!cli) {
    throw new Error(
      `no agent image for "${family}"; build one of ${IMAGE_FAMILIES.map((f) => f.harness).join(", ")}`,
    );
  }
  const packages = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")).packages as LockPackages;
  const modules = modulesParent(root);
  const installed = (path: string) => existsSync(join(modules, path, "package.json"));
  const runtimeSet = lockClosure(packages, Object.keys(packages[""]?.dependencies ?? {}), installed);
  const cliSet = lockClosure(packages, [cli.npmPackage], installed);
  const runtime = outermost(runtimeSet);
  const bins = Object.keys(binsOf(packages[`node_modules/${cli.npmPackage}`]?.bin, cli.npmPackage))
    .map((name) => `node_modules/.bin/${name}`)
    .filter((path) => existsSync(join(modules, path)));
  const own = [...outermost(cliSet, new Set(runtime)), ...bins];
  // What is on disk names the layer: each copied package's installed version and the lock's integrity.
  const hash = createHash("sha256");
  hash.update(readFileSync(join(root, "docker/agent-deps.Dockerfile")));
  for (const path of [...runtimeSet, ...cliSet].sort()) {
    const version = installed(path)
      ? (JSON.parse(readFileSync(join(modules, path, "package.json"), "utf8")).version as string)
      : "";
    hash.update(`${path}@${version} ${packages[path]?.integrity ?? ""}\n`);
  }
  hash.update(own.join("\n"));
  return { runtime, cli: own, hash: hash.digest("hex").slice(0, 12) };
}

function binsOf(bin: Record<string, string> | string | undefined, name: string): Record<string, string> {
  if (typeof bin === "string") return { [name.split("/").at(-1)!]: bin };
  return bin ?? {};
}

/** Brain's build as the image runs it: compiled JavaScript only (no maps, no tests), and package.json. */
export function appFiles(root = installDir()): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? walk(join(dir, e.name))
        : e.name.endsWith(".js") && !e.name.endsWith(".test.js")
          ? [join(dir, e.name)]
          : [],
    );
  for (const dir of ["dist/src", "dist/sdk"]) {
    if (!existsSync(join(root, dir))) throw new Error(`no ${dir} in ${root}: run npm run build first`);
  }
  return ["package.json", ...walk("dist/src"), ...walk("dist/sdk")].sort();
}

export function appHash(files: string[], root = installDir()): string {
  const hash = createHash("sha256");
  hash.update(readFileSync(join(root, "docker/agent-server.Dockerfile")));
  for (const file of files) hash.update(`${file}\n`).update(readFileSync(join(root, file)));
  return hash.digest("hex").slice(0, 12);
}

/** Copies `paths` (relative to `from`) under `to`, as hard links when both are on one file system. */
function copyTree(from: string, paths: string[], to: string): void {
  if (!paths.length) return;
  mkdirSync(to, { recursive: true });
  const args = ["-a", "--parents", ...paths, to];
  try {
    execFileSync("cp", ["--link", ...args], { cwd: from, stdio: ["ignore", "ignore", "pipe"] });
  } catch {
    execFileSync("cp", args, { cwd: from, stdio: ["ignore", "ignore", "pipe"] });
  }
}

function main(argv: string[]): void {
  const [what, ...rest] = argv;
  const root = installDir();
  if (what === "deps" && rest[0]) {
    const plan = depsPlan(rest[0], root);
    if (rest[1]) {
      copyTree(modulesParent(root), plan.runtime, join(rest[1], "runtime"));
      copyTree(modulesParent(root), plan.cli, join(rest[1], "cli"));
    }
    process.stdout.write(`${plan.hash}\n`);
  } else if (what === "app") {
    const files = appFiles(root);
    if (rest[0]) copyTree(root, files, join(rest[0], "app"));
    process.stdout.write(`${appHash(files, root)}\n`);
  } else {
    throw new Error("usage: image-context.js deps <family> [dir] | app [dir]");
  }
}

if (isMain(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`image-context: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
