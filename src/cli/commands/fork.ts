import { need, parse, refuseExtra, str, withBrain } from "../args.js";

export const usage =
  "fork ID [--checkpoint CP]   a new session that starts from a checkpoint (default: the latest)";

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { checkpoint: { type: "string" } });
  const id = need(positionals[0], "fork needs a session ID");
  refuseExtra(positionals, 1, "fork takes one session ID (a checkpoint: --checkpoint CP)");
  const checkpoint = str(values.checkpoint) ?? "latest";
  return withBrain(values, async (brain) => {
    const session = await brain.fork(id, checkpoint);
    process.stdout.write(`${session.id}\n`);
    process.stderr.write(`forked session ${id} (checkpoint ${checkpoint}) into new session ${session.id}\n`);
    return 0;
  });
}
