// The `brain` commands the README and docs/ show name a command and, of one with verbs, a verb it has: a reader
// copies them as written (docs/protocol.md said `brain ext list`, which answers 'unknown ext verb "list"').
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { root } from "../testing/brain-cli.js";
import { COMMANDS } from "./main.js";

const docs = ["README.md", ...readdirSync(join(root, "docs")).map((file) => join("docs", file))].filter(
  (file) => file.endsWith(".md"),
);

/** `brain WORD [WORD]` where a command starts: after a backtick, `npx `, or at the start of a line. */
function commandsIn(text: string): { command: string; verb?: string }[] {
  const found = text.matchAll(/(?:`|npx |^|\n)\s*brain ([a-z-]+)(?: ([a-z][a-z-]*)\b)?/g);
  return [...found].map((m) => ({ command: m[1]!, ...(m[2] ? { verb: m[2] } : {}) }));
}

it.each(docs)("%s shows only commands and verbs brain has", async (file) => {
  const wrong: string[] = [];
  for (const { command, verb } of commandsIn(readFileSync(join(root, file), "utf8"))) {
    const load = COMMANDS[command];
    if (!load) {
      wrong.push(`brain ${command}`);
      continue;
    }
    const verbs = (await load()).verbs;
    if (verbs && verb && !verbs.includes(verb)) wrong.push(`brain ${command} ${verb}`);
  }
  expect(wrong).toEqual([]);
});
