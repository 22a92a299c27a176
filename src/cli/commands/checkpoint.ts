import { need, parse, refuseExtra, withBrain } from "../args.js";
import { throughDaemon } from "../through-daemon.js";

export const usage = "checkpoint ID               checkpoint a session's native state (between turns)";

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args);
  const id = need(positionals[0], "checkpoint needs a session ID");
  refuseExtra(positionals, 1, "checkpoint takes one session ID");
  return withBrain(values, async (brain) => {
    const manifest = await (
      await brain
        .session(id)
        .catch((err) =>
          Promise.reject(
            throughDaemon(err, id, "checkpoints", "checkpoint it", ", or the web UI's Checkpoint"),
          ),
        )
    ).checkpoint();
    process.stdout.write(`checkpoint ${manifest.id} of session ${id}\n`);
    for (const file of manifest.files) {
      process.stdout.write(
        `  ${file.path}  ${file.size} bytes${file.append_only ? "  (append-only)" : ""}\n`,
      );
    }
    return 0;
  });
}
