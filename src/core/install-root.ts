// Brain's own install: the directory holding its package.json. Modules that name files of the install (web/, the
// compiled runners and shims, sdk/, node_modules/.bin) start from here, never from their own location: the same
// code runs from src/ under vitest, from dist/src/ as tsc writes it, and from the CLI's bundle in dist/cli/, each
// at a different depth.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "brain";

/** The nearest directory at or above `from` whose package.json is Brain's (runners/* have package.jsons too). */
export function findInstallRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown };
      if (manifest.name === PACKAGE_NAME) return dir;
    } catch {}
    if (dirname(dir) === dir) {
      throw new Error(
        `Brain's package.json (name "${PACKAGE_NAME}") is not in ${from} nor any directory above it`,
      );
    }
  }
}

let found: string | undefined;

/** Brain's install root, looked up once per process. */
export function installRoot(): string {
  found ??= findInstallRoot(dirname(fileURLToPath(import.meta.url)));
  return found;
}

/** The version in Brain's package.json. */
export function installVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(installRoot(), "package.json"), "utf8")) as { version: string })
      .version;
  } catch {
    return "0.0.0";
  }
}
