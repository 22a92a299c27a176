import { inDaemon, LogLockedError } from "../../store/fs/log-lock.js";
import { need, parse, withBrain } from "../args.js";

export const usage = "checkpoint ID               checkpoint a session's native state (between turns)";

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args);
  const id = need(positionals[0], "checkpoint needs a session ID");
  return withBrain(values, async (brain) => {
    const manifest = await (
      await brain.session(id).catch((err) => Promise.reject(throughDaemon(err, id)))
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

/** The daemon that has the session open takes its checkpoint: its route, not `brain run --server` (no checkpoint). */
function throughDaemon(err: unknown, id: string): unknown {
  if (!(err instanceof LogLockedError) || err.holder.kind !== "daemon") return err;
  const route = `${err.holder.url ?? "URL"}/v1/sessions/${id}/checkpoints`;
  return inDaemon(
    id,
    err.holder,
    `checkpoint it through the daemon: POST ${route} with a controller token, or the web UI's Checkpoint`,
  );
}
