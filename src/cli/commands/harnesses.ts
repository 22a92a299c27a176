import { parse, withBrain } from "../args.js";

export const usage = "harnesses                   the harnesses this config offers";

export async function command(args: string[]): Promise<number> {
  const { values } = parse(args);
  return withBrain(values, async (brain) => {
    for (const name of brain.harnesses.names()) process.stdout.write(`${name}\n`);
    return 0;
  });
}
