// `brain ext install SOURCE`: a directory, a .zip, or a git URL, holding extension.yaml at its top or in its one
// subdirectory (nui's rule). The extension is checked before anything is copied, copied to
// `<extensions>/<name>/` (replacing an older copy only once the new one is complete), and `rm` removes it.
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { ExtensionError, type InstalledExtension, loadExtension, MANIFEST_FILE } from "./extensions.js";

const GIT_URL = /^(https?:\/\/|git@|ssh:\/\/|git:\/\/|file:\/\/).+|\.git$/;

function exec(program: string, args: string[], timeoutMs = 120_000): Promise<void> {
  return new Promise((done, fail) => {
    execFile(program, args, { timeout: timeoutMs }, (err, _stdout, stderr) => {
      if (!err) return done();
      const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
      fail(
        new ExtensionError(
          missing
            ? `${program} is not installed; it is needed to unpack this source`
            : `${program} ${args[0]} failed: ${(stderr || err.message).trim()}`,
        ),
      );
    });
  });
}

/** The directory holding extension.yaml: `dir` itself or its only subdirectory. */
export function findExtensionRoot(dir: string, source: string): string {
  if (existsSync(join(dir, MANIFEST_FILE))) return dir;
  const subdirs = readdirSync(dir).filter(
    (name) => !name.startsWith(".") && statSync(join(dir, name)).isDirectory(),
  );
  const withManifest = subdirs.filter((name) => existsSync(join(dir, name, MANIFEST_FILE)));
  if (withManifest.length === 1) return join(dir, withManifest[0]!);
  if (withManifest.length > 1) {
    throw new ExtensionError(
      `${source}: several subdirectories hold an ${MANIFEST_FILE} (${withManifest.join(", ")}); install one of them`,
    );
  }
  throw new ExtensionError(
    `${source}: no ${MANIFEST_FILE} at its top or in one subdirectory; is it a nui extension?`,
  );
}

export async function installExtension(source: string, extensionsDir: string): Promise<InstalledExtension> {
  const scratch = mkdtempSync(join(tmpdir(), "brain-ext-"));
  try {
    let root: string;
    if (GIT_URL.test(source) && !existsSync(source)) {
      // "--": a source that starts with "-" is a repository git cannot find, not one of git's options.
      await exec("git", ["clone", "--depth", "1", "--", source, join(scratch, "clone")]);
      root = findExtensionRoot(join(scratch, "clone"), source);
    } else {
      const path = resolve(source);
      if (!existsSync(path)) throw new ExtensionError(`${source}: no such directory, .zip file or git URL`);
      if (statSync(path).isDirectory()) root = findExtensionRoot(path, source);
      else if (path.toLowerCase().endsWith(".zip")) {
        await exec("unzip", ["-q", path, "-d", join(scratch, "zip")]);
        root = findExtensionRoot(join(scratch, "zip"), source);
      } else throw new ExtensionError(`${source}: give a directory, a .zip file or a git URL`);
    }
    const checked = loadExtension(root);
    mkdirSync(extensionsDir, { recursive: true });
    const target = join(extensionsDir, checked.name);
    const staging = join(extensionsDir, `.${checked.name}.installing`);
    rmSync(staging, { recursive: true, force: true });
    cpSync(root, staging, { recursive: true, filter: (src) => basename(src) !== ".git" });
    // The copy must load as the source did before it replaces the installed one (a link to a file outside the
    // source, say, may not survive the copy): a broken reinstall would otherwise have deleted a working one.
    try {
      loadExtension(staging);
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      throw new ExtensionError(
        `${source}: its copy does not load, so nothing was installed or replaced: ${(err as Error).message}`,
      );
    }
    const old = join(extensionsDir, `.${checked.name}.old`);
    rmSync(old, { recursive: true, force: true });
    if (existsSync(target)) renameSync(target, old);
    renameSync(staging, target);
    rmSync(old, { recursive: true, force: true });
    return loadExtension(target, checked.name);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function removeExtension(name: string, extensionsDir: string): void {
  const target = join(extensionsDir, name);
  // lstat: a link whose target is gone is there to remove (existsSync follows it).
  const there = lstatSync(target, { throwIfNoEntry: false }) !== undefined;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || !there) {
    const installed = existsSync(extensionsDir)
      ? readdirSync(extensionsDir).filter((n) => !n.startsWith("."))
      : [];
    throw new ExtensionError(
      `no extension "${name}" is installed; installed: ${installed.join(", ") || "(none)"}`,
    );
  }
  rmSync(target, { recursive: true, force: true });
}
