// Installed extensions: `<extensions dir>/<name>/extension.yaml` and the lists it points at. Loading is
// synchronous (the harness registry is built at startup) and every problem names the file, the field and the
// fix; one broken extension does not hide the others.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { z } from "zod";
import { connectionId } from "../../protocol/nui/connection.js";
import {
  AgentListFile,
  EXTENSION_API_VERSIONS,
  ExtensionManifest,
  extensionHarnessRef,
  type HarnessListEntry,
  HarnessListFile,
  type HarnessRuntime,
  type Transport,
} from "../../protocol/nui/manifest.js";
import { splitCommandLine } from "../process/command.js";

export const MANIFEST_FILE = "extension.yaml";

export class ExtensionError extends Error {
  override name = "ExtensionError";
}

export interface ExtensionHarness {
  /** `ext:<extension>/<id>`. */
  ref: string;
  id: string;
  displayName?: string;
  description?: string;
}

export interface ResolvedRuntime {
  transport: Transport;
  /** The host's command line with `${NUI_EXTENSION_DIR}` expanded; relative words resolve in `cwd`. */
  command?: string[];
  cwd: string;
  host?: string;
  port?: number;
  env: Record<string, string>;
}

export interface InstalledExtension {
  name: string;
  version: string;
  displayName?: string;
  description?: string;
  dir: string;
  manifest: ExtensionManifest;
  harnesses: ExtensionHarness[];
  runtime?: ResolvedRuntime;
  /** Raw agent definitions from `contributions.agents` (validated where they are used). */
  agents: { file: string; definitions: Record<string, unknown>[] };
}

/** The yaml package, loaded on first use (require caches it): most brain commands never read a manifest. */
const requireHere = createRequire(import.meta.url);
function parseYaml(text: string): unknown {
  return (requireHere("yaml") as { parse: (text: string) => unknown }).parse(text);
}

/** Parses a YAML or JSON file; the error names the file and the line. */
export function readStructured(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ExtensionError(`${file}: cannot read it: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new ExtensionError(`${file}: not valid YAML/JSON: ${(err as Error).message.split("\n")[0]}`);
  }
}

function issues(file: string, error: z.ZodError, fix: (path: string) => string | undefined): ExtensionError {
  const lines = error.issues.map((issue) => {
    const field = issue.path.join(".") || "(top level)";
    const hint = fix(field);
    return `field "${field}": ${issue.message}${hint ? ` (${hint})` : ""}`;
  });
  return new ExtensionError(`${file}: ${lines.join("; ")}`);
}

function manifestHint(field: string): string | undefined {
  if (field === "apiVersion") return `use apiVersion: ${EXTENSION_API_VERSIONS[0]}`;
  if (field === "name") return "the extension's name, also its directory name";
  if (field === "version") return 'e.g. version: "1.0.0"';
  if (field.endsWith("runtime.transport")) return "stdio (default), tcp or http";
  if (field.endsWith("runtime.command")) return 'e.g. command: ["python3", "harness_host.py"]';
  return undefined;
}

/** Reads and checks an extension in `dir`. With `expectName`, the manifest's name must match it. */
export function loadExtension(dir: string, expectName?: string): InstalledExtension {
  const file = join(dir, MANIFEST_FILE);
  if (!existsSync(file))
    throw new ExtensionError(
      `${dir}: no ${MANIFEST_FILE}; an extension directory holds its manifest at the top`,
    );
  const parsed = ExtensionManifest.safeParse(readStructured(file));
  if (!parsed.success) throw issues(file, parsed.error, manifestHint);
  const manifest = parsed.data;
  if (expectName !== undefined && manifest.name !== expectName) {
    throw new ExtensionError(
      `${file}: field "name" is "${manifest.name}" but the extension is installed as "${expectName}"; reinstall it with brain ext install`,
    );
  }
  const contributions = manifest.contributions ?? {};
  const harnesses = contributions.harnesses
    ? loadHarnessList(dir, file, manifest.name, contributions.harnesses.source)
    : [];
  const runtime = contributions.harnesses
    ? resolveRuntime(dir, file, contributions.harnesses.runtime ?? {}, harnesses.length > 0)
    : undefined;
  const agents = contributions.agents
    ? loadAgentList(dir, file, contributions.agents.source)
    : { file, definitions: [] };
  return {
    name: manifest.name,
    version: manifest.version,
    ...(manifest.displayName ? { displayName: manifest.displayName } : {}),
    ...(manifest.description ? { description: manifest.description } : {}),
    dir,
    manifest,
    harnesses,
    ...(runtime ? { runtime } : {}),
    agents,
  };
}

function listFile(
  dir: string,
  manifestFile: string,
  field: string,
  source: { file?: string; command?: unknown },
): string {
  if (!source.file) {
    const why =
      source.command !== undefined
        ? "lists produced by a command (source.command) are not supported by Brain"
        : "it has no source.file";
    throw new ExtensionError(
      `${manifestFile}: field "${field}.source": ${why}; list them in a file: source: {file: ${field.split(".").pop()}.yaml}`,
    );
  }
  const path = resolve(dir, source.file);
  // An extension is installed as a copy of its directory: a list elsewhere is not copied with it.
  const inside = relative(dir, path);
  if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new ExtensionError(
      `${manifestFile}: field "${field}.source.file": ${source.file} is outside the extension's directory (${path}); put the list in the extension's directory and name it relative to it, e.g. file: ${basename(path)}`,
    );
  }
  if (!existsSync(path)) {
    throw new ExtensionError(
      `${manifestFile}: field "${field}.source.file": ${source.file} does not exist (looked at ${path})`,
    );
  }
  return path;
}

function loadHarnessList(
  dir: string,
  manifestFile: string,
  name: string,
  source: { file?: string; command?: unknown },
): ExtensionHarness[] {
  const file = listFile(dir, manifestFile, "contributions.harnesses", source);
  const parsed = HarnessListFile.safeParse(readStructured(file));
  if (!parsed.success) {
    throw issues(file, parsed.error, (field) =>
      field === "harnesses"
        ? "a list under harnesses:, each with an id"
        : field.endsWith(".id")
          ? "the id in ext:<extension>/<id>"
          : undefined,
    );
  }
  const seen = new Set<string>();
  return parsed.data.harnesses.map((entry: HarnessListEntry) => {
    if (seen.has(entry.id)) throw new ExtensionError(`${file}: harness id "${entry.id}" is listed twice`);
    seen.add(entry.id);
    return {
      ref: extensionHarnessRef(name, entry.id),
      id: entry.id,
      ...(entry.displayName ? { displayName: entry.displayName } : {}),
      ...(entry.description ? { description: entry.description } : {}),
    };
  });
}

function loadAgentList(dir: string, manifestFile: string, source: { file?: string; command?: unknown }) {
  const file = listFile(dir, manifestFile, "contributions.agents", source);
  const parsed = AgentListFile.safeParse(readStructured(file));
  if (!parsed.success)
    throw issues(file, parsed.error, () => "a list under agents:, each an agent definition");
  return { file, definitions: parsed.data.agents };
}

/** `${NUI_EXTENSION_DIR}` (and nui's older `${LOOP_EXTENSION_DIR}`) anywhere in a word is the extension dir. */
export function expandExtensionDir(word: string, dir: string): string {
  return word.replace(/\$\{(NUI|LOOP)_EXTENSION_DIR\}/g, dir);
}

function resolveRuntime(
  dir: string,
  manifestFile: string,
  runtime: HarnessRuntime,
  needed: boolean,
): ResolvedRuntime {
  const transport = runtime.transport ?? "stdio";
  const words =
    runtime.command === undefined
      ? undefined
      : typeof runtime.command === "string"
        ? splitCommandLine(runtime.command)
        : runtime.command;
  const command = words?.map((w) => expandExtensionDir(w, dir));
  if (needed && transport === "stdio" && !command) {
    throw new ExtensionError(
      `${manifestFile}: field "contributions.harnesses.runtime.command": a stdio harness host needs its command, e.g. command: ["python3", "harness_host.py"]`,
    );
  }
  if (needed && transport === "http" && !command && !runtime.port) {
    throw new ExtensionError(
      `${manifestFile}: field "contributions.harnesses.runtime": an http harness host needs a command (Brain starts it; it writes a connection file) or a port (it runs already)`,
    );
  }
  const cwd = runtime.cwd && runtime.cwd !== "." ? resolve(dir, expandExtensionDir(runtime.cwd, dir)) : dir;
  return {
    transport,
    ...(command ? { command } : {}),
    cwd,
    ...(runtime.host ? { host: runtime.host } : {}),
    ...(runtime.port ? { port: runtime.port } : {}),
    env: Object.fromEntries(
      Object.entries(runtime.env ?? {}).map(([k, v]) => [k, expandExtensionDir(v, dir)]),
    ),
  };
}

/** Installed extensions live here. */
export function extensionsDir(brainHome: string): string {
  return join(brainHome, "extensions");
}

/** Every extension under `root`; broken ones are reported in `problems`, not thrown. */
export function listExtensions(root: string): { extensions: InstalledExtension[]; problems: string[] } {
  const extensions: InstalledExtension[] = [];
  const problems: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(root).sort();
  } catch {
    return { extensions, problems };
  }
  for (const name of names) {
    if (name.startsWith(".")) continue;
    const dir = join(root, name);
    try {
      // A link whose target is gone (an extension linked in from where it is developed) throws here: it is one
      // broken extension, not the end of every harness's catalog.
      if (!statSync(dir).isDirectory()) continue;
    } catch (err) {
      problems.push(
        `${dir}: cannot read it (${(err as Error).message}); install the extension again, or remove it with brain ext rm ${name}`,
      );
      continue;
    }
    try {
      extensions.push(loadExtension(dir, basename(dir)));
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return { extensions: withoutClashes(extensions, problems), problems };
}

/**
 * The extensions without the TCP and HTTP harnesses whose connection files would have one name (nui's sanitizing
 * makes `ext:a-b/c` and `ext:a/b-c` both `ext-a-b-c.json`): each would dial whichever host wrote the file first, and
 * one extension's sessions, their prompts and questions, would run on the other's agent. Each clash is a problem.
 * A stdio host has no such file.
 */
function withoutClashes(extensions: InstalledExtension[], problems: string[]): InstalledExtension[] {
  const byId = new Map<string, string[]>();
  for (const extension of extensions) {
    if (!extension.runtime || extension.runtime.transport === "stdio") continue;
    for (const { ref } of extension.harnesses) {
      const id = connectionId(ref);
      byId.set(id, [...(byId.get(id) ?? []), ref]);
    }
  }
  const clashing = new Set<string>();
  for (const [id, refs] of byId) {
    if (refs.length < 2) continue;
    for (const ref of refs) clashing.add(ref);
    problems.push(
      `${refs.slice(0, -1).join(", ")} and ${refs.at(-1)} would both find their host through the connection file ${id}.json (nui names it so), and could each reach the other's host: neither is offered; rename one extension, or one harness id`,
    );
  }
  if (clashing.size === 0) return extensions;
  return extensions.map((extension) => ({
    ...extension,
    harnesses: extension.harnesses.filter((harness) => !clashing.has(harness.ref)),
  }));
}
