import { join } from "node:path";
import { HarnessRegistry } from "../../core/registry.js";
import { isDescribable } from "../../harnesses/cli/family.js";
import { VersionCache } from "../../harnesses/cli/version-cache.js";
import type { Catalog } from "../../harnesses/family.js";
import { parse, refuseExtra, str } from "../args.js";
import { type LoadedConfig, loadConfig } from "../config.js";
import { brainHome, configHarnesses } from "../harness-setup.js";

export const usage =
  "harnesses                   the harnesses this config offers (CLI agents: found? version?)";

/**
 * One line per harness the catalog offers under this config. The CLI families say whether their program is
 * installed, and which version: asked in parallel, and remembered by program path and mtime under $BRAIN_HOME.
 */
export async function harnessLines(loaded: LoadedConfig, home: string, catalog?: Catalog): Promise<string[]> {
  const registry = new HarnessRegistry(configHarnesses(loaded, home, catalog).factories);
  const names = registry.names();
  const width = Math.max(...names.map((n) => n.length));
  const cache = new VersionCache(join(home, "cache", "cli-versions.json"));
  const lines = await Promise.all(
    names.map(async (name) => {
      const factory = registry.get(name);
      if (!isDescribable(factory)) return name;
      const cli = await factory.describe(cache);
      const status = cli.path
        ? `${cli.program} ${cli.version ?? "(version unknown)"}  ${cli.path}`
        : `${cli.program} not found`;
      return `${name.padEnd(width)}  ${status}`;
    }),
  );
  cache.save();
  return lines;
}

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args);
  refuseExtra(positionals, 0, "harnesses takes no arguments");
  for (const line of await harnessLines(loadConfig(str(values.config)), brainHome())) {
    process.stdout.write(`${line}\n`);
  }
  return 0;
}
