// `npm run faults`: runs test/faults and prints the matrix, fault × harness family. A describe block is a fault,
// a test in it is a family (a name like "daemon (5 MiB prompt)" is a variant of that family's cell, and
// shows as its own row). Each cell says how the family came through, then what the cell counted as
// "lost/secrets" (acknowledged events missing from the log / configured secrets found in what Brain wrote):
//   ok      every assertion held
//   FAILED  an assertion did not hold (the defect is real here)
//   known   an it.fails row: it fails today, as expected; its fix is on another branch (see the comment)
//   FIXED?  an it.fails row that passes: the fix has landed, flip it to it(...)
//   n/a     the fault does not apply to the family
import type { Reporter, TestCase, TestModule } from "vitest/node";

interface Row {
  fault: string;
  family: string;
  cell: string;
  lost?: number;
  secrets?: number;
}

const COLUMNS = ["process", "api", "ext", "http", "daemon", "codec"];

function rowOf(test: TestCase): Row {
  const suites: string[] = [];
  for (let p = test.parent; p.type === "suite"; p = p.parent) suites.unshift(p.name);
  // describe.each puts the family in an outer block; the fault is the innermost block.
  const fault = suites.at(-1) ?? test.module.moduleId;
  const match = /^(\S+)(?: \((.+)\))?$/.exec(test.name);
  const family = match?.[1] ?? test.name;
  const variant = match?.[2];
  const state = test.result().state;
  const cell =
    state === "skipped"
      ? "skipped"
      : test.options.fails
        ? state === "passed"
          ? "known"
          : "FIXED?"
        : state === "passed"
          ? "ok"
          : "FAILED";
  const meta = test.meta();
  return {
    fault: variant ? `${fault} (${variant})` : fault,
    family,
    cell,
    ...(meta.eventsLost !== undefined ? { lost: meta.eventsLost } : {}),
    ...(meta.secretsFound !== undefined ? { secrets: meta.secretsFound } : {}),
  };
}

function text(row: Row | undefined): string {
  if (!row) return "n/a";
  if (row.lost === undefined && row.secrets === undefined) return row.cell;
  return `${row.cell} ${row.lost ?? "-"}/${row.secrets ?? "-"}`;
}

export default class FaultTable implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows: Row[] = [];
    for (const module of modules) for (const test of module.children.allTests()) rows.push(rowOf(test));
    // The harness faults first, the codec fuzzers after them.
    rows.sort((a, b) => Number(a.family === "codec") - Number(b.family === "codec"));
    const faults = [...new Set(rows.map((r) => r.fault))];
    const families = COLUMNS.filter((c) => rows.some((r) => r.family === c));
    const table = faults.map((fault) => [
      fault,
      ...families.map((family) => text(rows.find((r) => r.fault === fault && r.family === family))),
    ]);
    const header = ["fault", ...families];
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((line) => line[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ");
    const out = [line(header), widths.map((w) => "-".repeat(w)).join("-|-"), ...table.map(line)];
    const lost = rows.reduce((n, r) => n + (r.lost ?? 0), 0);
    const secrets = rows.reduce((n, r) => n + (r.secrets ?? 0), 0);
    const failed = rows.filter((r) => r.cell === "FAILED").length;
    const fixed = rows.filter((r) => r.cell === "FIXED?").length;
    const known = rows.filter((r) => r.cell === "known").length;
    out.push(
      "",
      `${rows.length} cells: ${failed} failed, ${known} known (it.fails; fixed on other branches), ` +
        `${fixed} it.fails now passing; ${lost} events lost, ${secrets} secrets found`,
    );
    const legend =
      "cells: ok | FAILED | known (it.fails) | FIXED? (it.fails that passes) | n/a, then lost/secrets";
    process.stdout.write(`\nfault matrix (${legend})\n${out.join("\n")}\n`);
  }
}
