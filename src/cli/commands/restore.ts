import { resolve } from "node:path";
import { need, parse, refuseExtra, str, withBrain } from "../args.js";

export const usage = `restore ID --into DIR [--checkpoint CP]
                              write a checkpoint's native files into a fresh directory`;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { into: { type: "string" }, checkpoint: { type: "string" } });
  const id = need(positionals[0], "restore needs a session ID");
  refuseExtra(positionals, 1, "restore takes one session ID (the directory: --into DIR)");
  const dir = resolve(need(str(values.into), "restore needs --into DIR"));
  const checkpoint = str(values.checkpoint) ?? "latest";
  return withBrain(values, async (brain) => {
    const restored = await brain.restore(id, checkpoint, dir);
    process.stdout.write(`restored checkpoint ${restored} of session ${id} into ${dir}\n`);
    return 0;
  });
}
