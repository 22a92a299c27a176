// A Chromium for the browser tests that needs nothing beyond `npm install`: $BRAIN_CHROMIUM when set, Debian's
// chromium when it is installed, else the build that ships inside the `@sparticuz/chromium` npm package, unpacked
// once into node_modules/.cache. The package unpacks into os.tmpdir(), and skips the work when its files are
// already there, so it runs in a child whose TMPDIR is a fresh directory that is renamed into place only when
// complete: two test runs unpacking at once never see half a binary.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { type Browser, chromium } from "playwright-core";

export type TestBrowser = {
  executablePath: string;
  /** Environment for the browser process (the npm build brings its own fonts). */
  env?: Record<string, string>;
  /** Where it came from, for error messages. */
  source: string;
};

const DEBIAN_CHROMIUM = "/usr/bin/chromium";
const PACKAGE = "@sparticuz/chromium";

export async function findTestBrowser(env: NodeJS.ProcessEnv = process.env): Promise<TestBrowser> {
  const override = env.BRAIN_CHROMIUM;
  if (override) {
    if (!existsSync(override)) {
      throw new Error(`BRAIN_CHROMIUM=${override}: no such file; point it at a chromium binary or unset it`);
    }
    return { executablePath: override, source: "BRAIN_CHROMIUM" };
  }
  if (existsSync(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, source: DEBIAN_CHROMIUM };
  return unpackNpmChromium();
}

async function unpackNpmChromium(): Promise<TestBrowser> {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve(PACKAGE);
  } catch {
    throw new Error(
      `no browser for the web UI tests: ${PACKAGE} is not installed (run \`npm install\`), and there is no ` +
        `${DEBIAN_CHROMIUM} (or set BRAIN_CHROMIUM to a chromium binary)`,
    );
  }
  const packageRoot = findPackageRoot(entry);
  const version = (JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string })
    .version;
  // node_modules/.cache next to the package's own node_modules, so a reinstall of another version unpacks afresh.
  const cacheRoot = join(packageRoot, "..", "..", ".cache", "brain-chromium");
  const target = join(cacheRoot, version);
  const binary = join(target, "chromium");
  if (!existsSync(binary)) {
    mkdirSync(cacheRoot, { recursive: true });
    const staging = mkdtempSync(join(cacheRoot, `.${version}-`));
    try {
      const script = `import(${JSON.stringify(PACKAGE)}).then((m) => m.default.executablePath()).then((p) => process.stdout.write(p))`;
      const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
        cwd: packageRoot,
        env: { ...process.env, TMPDIR: staging },
      });
      if (stdout !== join(staging, "chromium")) {
        throw new Error(`${PACKAGE} unpacked chromium to ${stdout}, expected ${join(staging, "chromium")}`);
      }
      try {
        renameSync(staging, target);
      } catch (error) {
        // Another run finished first: its copy is complete, ours is redundant.
        if (!existsSync(binary)) throw error;
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return {
    executablePath: binary,
    env: { FONTCONFIG_FILE: fontsConf(target) },
    source: `${PACKAGE}@${version}`,
  };
}

/**
 * The fontconfig file naming this unpacked copy's fonts by absolute path, rewritten when it names another place:
 * a node_modules copied or moved with its cache (`cp -al` into a worktree) would otherwise point chromium at
 * fonts that are gone, and it aborts on the first text it draws.
 */
function fontsConf(target: string): string {
  const path = join(target, "fonts.conf");
  const text = `<?xml version="1.0"?>\n<fontconfig><dir>${join(target, "fonts")}</dir><cachedir>${join(target, "fonts-cache")}</cachedir></fontconfig>\n`;
  if (!existsSync(path) || readFileSync(path, "utf8") !== text) {
    const staging = `${path}.${process.pid}`;
    writeFileSync(staging, text);
    renameSync(staging, path);
  }
  return path;
}

function findPackageRoot(entry: string): string {
  let dir = dirname(entry);
  while (!existsSync(join(dir, "package.json")) || !isPackage(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the package.json of ${PACKAGE} above ${entry}`);
    dir = parent;
  }
  return dir;
}

function isPackage(path: string): boolean {
  return (JSON.parse(readFileSync(path, "utf8")) as { name?: string }).name === PACKAGE;
}

/** Chromium as every web UI test runs it: headless, no sandbox (tests run as root), nothing fetched from outside. */
export async function launchTestBrowser(found: TestBrowser, extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: found.executablePath,
    env: found.env ? { ...process.env, ...found.env } : undefined,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      ...extraArgs,
    ],
  });
}
