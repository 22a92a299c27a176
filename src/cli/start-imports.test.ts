// What the CLI loads to start: `brain run` on a runner and `brain harnesses` must not import the packages only
// some sessions use (the MCP SDK, the AI SDK, Ajv, Hono, NATS, the ACP SDK). Hooks in the real process report
// every file it resolves, as an ES module or with require(), and at exit the CommonJS modules it holds; one stray
// static import of a heavy module from a family's descriptor costs every start hundreds of milliseconds.
// bin/brain.js loads the bundle in dist/cli/ (CommonJS chunks): a chunk loaded counts as every module it holds
// (dist/cli/modules.json, written with the bundle).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { root, useBrainCli } from "../testing/brain-cli.js";

const HOOK = `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith("file:")) process.stderr.write("RESOLVED " + resolved.url + "\\n");
  return resolved;
}`;
/** The ES module hook, plus require()'s resolution and, at exit, the modules in require.cache (the chunks). */
const REGISTER = `import Module, { register } from "node:module";
import { pathToFileURL } from "node:url";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});
const report = (file) => file.startsWith("/") && process.stderr.write("RESOLVED " + pathToFileURL(file).href + "\\n");
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const file = resolveFilename.apply(this, args);
  report(file);
  return file;
};
process.on("exit", () => Object.keys(Module._cache).forEach(report));`;

/** Packages a runner session or a listing never needs. */
const HEAVY = [
  "@modelcontextprotocol/sdk",
  "ai",
  "@ai-sdk",
  "ajv",
  "zod-to-json-schema",
  "hono",
  "@hono",
  "@nats-io",
  "@agentclientprotocol/sdk",
];

/** The files `node <script> <args>` resolved, given `input` on stdin. */
function filesResolved(
  script: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  input = "",
): string[] {
  const result = spawnSync(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(REGISTER)}`, script, ...args],
    { cwd, env, encoding: "utf8", input },
  );
  expect(result.status, result.stderr).toBe(0);
  return [...new Set([...result.stderr.matchAll(/^RESOLVED (\S+)$/gm)].map((m) => m[1]!))];
}

/** The files `brain <args>` resolved, each chunk of the bundle as the files it holds. */
function filesLoaded(cli: ReturnType<typeof useBrainCli>, args: string[]): string[] {
  const files = filesResolved(join(root, "bin/brain.js"), args, cli.work, {
    ...process.env,
    BRAIN_HOME: cli.home,
  });
  const bundle = pathToFileURL(join(root, "dist/cli/")).href;
  const chunks = JSON.parse(readFileSync(join(root, "dist/cli/modules.json"), "utf8")) as Record<
    string,
    string[]
  >;
  return files.flatMap((file) => {
    if (!file.startsWith(bundle)) return [file];
    const held = chunks[file.slice(bundle.length)];
    expect(held, `${file} is not in dist/cli/modules.json`).toBeDefined();
    return held!.map((id) => pathToFileURL(join(root, id)).href);
  });
}

/** The npm packages among `files`. */
function packages(files: string[]): string[] {
  const names = new Set<string>();
  for (const [, path] of files.join("\n").matchAll(/\/node_modules\/(\S+)$/gm)) {
    const parts = path!.split("/");
    names.add(parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!);
  }
  return [...names].sort();
}

const heavy = (names: string[]) =>
  names.filter((name) => HEAVY.some((h) => name === h || name.startsWith(`${h}/`)));

describe("CLI start-up imports", () => {
  const cli = useBrainCli("start-imports");

  it("`brain run` on the echo runner loads none of the packages its session does not use", () => {
    expect(heavy(packages(filesLoaded(cli, ["run", "hello"])))).toEqual([]);
  });

  it("`brain run` loads the bundle's chunks, neither compiled modules one by one nor zod's files", () => {
    const files = filesResolved(join(root, "bin/brain.js"), ["run", "hello"], cli.work, {
      ...process.env,
      BRAIN_HOME: cli.home,
    });
    expect(files.filter((f) => f.includes("/dist/src/") || f.includes("/node_modules/"))).toEqual([]);
    expect(files).toContain(pathToFileURL(join(root, "dist/cli/main.js")).href);
  });

  it("the echo runner (on the runner SDK) answers an open and a prompt without loading zod", () => {
    const frames = [
      {
        attachment: "A",
        id: "o1",
        method: "open",
        params: { session_id: "s", dir: cli.work, config: {}, tools: [], provider: {} },
      },
      { attachment: "A", turn: "T1", id: "p1", method: "prompt", params: { text: "hello" } },
    ];
    const input = frames.map((f) => `${JSON.stringify(f)}\n`).join("");
    const files = filesResolved(join(root, "dist/runners/echo/main.js"), [], cli.work, process.env, input);
    expect(packages(files)).toEqual([]);
  });

  it("`brain harnesses` loads none of them either, nor the session store and the core", () => {
    const files = filesLoaded(cli, ["harnesses"]);
    expect(heavy(packages(files))).toEqual([]);
    expect(
      files.filter((f) => /\/src\/(store\/|core\/brain\.js|tools\/(builtin|router|mcp)\b)/.test(f)),
    ).toEqual([]);
  });
});
