import { need, parse, refuseExtra, str, withBrain } from "../args.js";

export const usage = `handoff ID --to HARNESS [--model M]
                              a new session on another harness that continues session ID's conversation
                              (seeded from Brain's log; the original stays as it was)`;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { to: { type: "string" }, model: { type: "string" } });
  const id = need(positionals[0], "handoff needs a session ID");
  refuseExtra(positionals, 1, "handoff takes one session ID (the harness: --to HARNESS)");
  const to = need(str(values.to), "handoff needs --to HARNESS (see `brain harnesses`)");
  const model = str(values.model);
  return withBrain(values, async (brain) => {
    const session = await brain.handoff(id, { to, ...(model ? { model } : {}) });
    const { seeded } = await brain.record(session.id);
    const how =
      seeded?.how === "summary"
        ? "its first prompt carries the history as a summary (Brain cannot write this harness's own format)"
        : "its native state holds the whole conversation";
    process.stdout.write(`${session.id}\n`);
    process.stderr.write(`handed session ${id} to ${to} as new session ${session.id}: ${how}\n`);
    return 0;
  });
}
