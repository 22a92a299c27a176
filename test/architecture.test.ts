// The layers of src/ as DESIGN.md draws them, checked on every run: the ground floors (protocol ← core ←
// store/tools ← harnesses) never import the rooms built on them, no module imports itself back at run time,
// and no file, tests included, outgrows one sitting. A new import that breaks a rule fails here naming the file and the import.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");
const MAX_LINES = 400;

/** What each floor may import from src/ (besides itself). */
const ALLOWED: Record<string, string[]> = {
  protocol: [],
  core: ["protocol"],
  store: ["core", "protocol"],
  tools: ["core", "protocol"],
  harnesses: ["core", "protocol", "store", "tools"],
};

interface SourceFile {
  path: string;
  text: string;
  /** Imports that exist at run time (not `import type`), as paths relative to src/. */
  runtime: string[];
  all: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const IMPORT = /^(?:import|export)\s+(type\s+)?(?:[^"';]*?\sfrom\s+)?"(\.[^"]+)"/gm;

function parse(path: string): SourceFile {
  const text = readFileSync(path, "utf8");
  const runtime: string[] = [];
  const all: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = relative(SRC, resolve(dirname(path), match[2]!)).replace(/\.js$/, ".ts");
    all.push(target);
    if (!match[1]) runtime.push(target);
  }
  return { path: relative(SRC, path), text, runtime, all };
}

const all = sourceFiles(SRC).map(parse);
/**
 * What ships: the layer rules are about it (tests and test support, src/testing and a family's testing/, may
 * reach across layers to set up what they check).
 */
const files = all.filter((file) => !file.path.endsWith(".test.ts") && !/(^|\/)testing\//.test(file.path));

describe("the layers of src/", () => {
  it("keep the ground floors free of the rooms above them", () => {
    const breaks: string[] = [];
    for (const file of files) {
      const floor = file.path.split("/")[0]!;
      const allowed = ALLOWED[floor];
      if (!allowed) continue;
      for (const target of file.all) {
        const to = target.split("/")[0]!;
        if (to !== floor && !allowed.includes(to)) breaks.push(`${file.path} imports ${target}`);
      }
    }
    expect(breaks).toEqual([]);
  });

  it("have no import cycle at run time", () => {
    const graph = new Map(files.map((file) => [file.path, file.runtime]));
    const cycles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const visit = (path: string, trail: string[]) => {
      if (state.get(path) === "done") return;
      if (state.get(path) === "visiting") {
        cycles.push([...trail.slice(trail.indexOf(path)), path].join(" → "));
        return;
      }
      state.set(path, "visiting");
      for (const next of graph.get(path) ?? []) if (graph.has(next)) visit(next, [...trail, path]);
      state.set(path, "done");
    };
    for (const path of graph.keys()) visit(path, []);
    expect(cycles).toEqual([]);
  });

  it(`keep every source file under ${MAX_LINES} lines`, () => {
    const long = all
      .map((file) => ({ path: file.path, lines: file.text.split("\n").length }))
      .filter((file) => file.lines > MAX_LINES)
      .map((file) => `${file.path}: ${file.lines} lines`);
    expect(long).toEqual([]);
  });

  it(`keep the Python SDK's files under ${MAX_LINES} lines too`, () => {
    const dir = resolve(SRC, "../sdk/python");
    const long = readdirSync(dir)
      .filter((name) => name.endsWith(".py"))
      .map((name) => ({ name, lines: readFileSync(join(dir, name), "utf8").split("\n").length }))
      .filter((file) => file.lines > MAX_LINES)
      .map((file) => `sdk/python/${file.name}: ${file.lines} lines`);
    expect(long).toEqual([]);
  });

  it("finds the imports it checks (the parser is not silently blind)", () => {
    const session = files.find((file) => file.path === "core/session.ts");
    expect(session?.runtime.length).toBeGreaterThan(3);
    expect(session?.all).toContain("core/session-tools.ts");
  });
});
