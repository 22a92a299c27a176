import { isDescribable } from "../../harnesses/cli/family.js";
import { parse, withBrain } from "../args.js";

export const usage =
  "harnesses                   the harnesses this config offers (CLI agents: found? version?)";

export async function command(args: string[]): Promise<number> {
  const { values } = parse(args);
  return withBrain(values, async (brain) => {
    const names = brain.harnesses.names();
    const width = Math.max(...names.map((n) => n.length));
    // The CLI families say whether their program is installed, and which version (asked in parallel).
    const lines = await Promise.all(
      names.map(async (name) => {
        const factory = brain.harnesses.get(name);
        if (!isDescribable(factory)) return name;
        const cli = await factory.describe();
        const status = cli.path
          ? `${cli.program} ${cli.version ?? "(version unknown)"}  ${cli.path}`
          : `${cli.program} not found`;
        return `${name.padEnd(width)}  ${status}`;
      }),
    );
    for (const line of lines) process.stdout.write(`${line}\n`);
    return 0;
  });
}
