// `brain ext install SOURCE | ls | rm NAME`: nui extensions in $BRAIN_HOME/extensions. Their harnesses run as
// `ext:<extension>/<harness-id>` (e.g. `brain run --harness ext:corp-pack/echo "hi"`).

import { extensionsDir, listExtensions } from "../../harnesses/ext/extensions.js";
import { installExtension, removeExtension } from "../../harnesses/ext/install.js";
import { need, parse, refuseExtra, UsageError } from "../args.js";
import { brainHome } from "../setup.js";

export const usage = `ext install SOURCE | ls [--json] | rm NAME
                              nui extensions (a directory, .zip or git URL) and the ext:<name>/<id> harnesses they add`;

export const verbs = ["install", "ls", "rm"] as const;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: "boolean" } });
  const [verb = "ls", target] = positionals;
  if (verb === "ls") refuseExtra(positionals, 1, "ext ls takes no arguments");
  if (verb === "install") refuseExtra(positionals, 2, "ext install takes one SOURCE");
  if (verb === "rm") refuseExtra(positionals, 2, "ext rm takes one NAME");
  const dir = extensionsDir(brainHome());
  switch (verb) {
    case "install": {
      const ext = await installExtension(
        need(target, "ext install needs a SOURCE: a directory, a .zip file or a git URL"),
        dir,
      );
      process.stdout.write(`installed ${ext.name} ${ext.version} into ${ext.dir}\n`);
      for (const h of ext.harnesses)
        process.stdout.write(`  harness ${h.ref}  (${ext.runtime?.transport ?? "stdio"})\n`);
      for (const a of ext.agents.definitions)
        process.stdout.write(`  agent   ext:${ext.name}/${String(a.id ?? "?")}\n`);
      return 0;
    }
    case "ls": {
      const { extensions, problems } = listExtensions(dir);
      for (const ext of extensions) {
        if (values.json) {
          const { manifest: _manifest, agents, ...rest } = ext;
          process.stdout.write(
            `${JSON.stringify({ ...rest, agents: agents.definitions.map((a) => a.id) })}\n`,
          );
          continue;
        }
        process.stdout.write(`${ext.name}  ${ext.version}  ${ext.displayName ?? ""}\n`);
        for (const h of ext.harnesses) {
          process.stdout.write(
            `  ${h.ref}  ${ext.runtime?.transport ?? "stdio"}${h.description ? `  ${h.description}` : ""}\n`,
          );
        }
      }
      for (const problem of problems) process.stderr.write(`broken extension: ${problem}\n`);
      if (extensions.length === 0 && problems.length === 0 && !values.json) {
        process.stderr.write(`no extensions in ${dir}: install one with brain ext install PATH\n`);
      }
      return problems.length ? 1 : 0;
    }
    case "rm":
    case "remove": {
      const name = need(target, "ext rm needs the extension's NAME (see brain ext ls)");
      removeExtension(name, dir);
      process.stdout.write(`removed ${name}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown ext verb "${verb}": use install SOURCE, ls or rm NAME`);
  }
}
