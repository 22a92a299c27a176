// A command that writes a session (a checkpoint, a rebuild) is refused while the daemon has the session open: one
// process writes a session at a time. The lock's own hint (`brain run --server`, `brain attach`) prompts; it takes no
// checkpoint and rebuilds nothing, so such a command names the daemon's route that does what it was asked.
import { inDaemon, LogLockedError } from "../store/fs/log-lock.js";

/**
 * `err` as it stands, unless it is the daemon's lock on session `id`: then that, naming `POST URL/v1/sessions/ID/<route>`
 * (and `also`, another way there is, as the web UI's button).
 */
export function throughDaemon(err: unknown, id: string, route: string, what: string, also = ""): unknown {
  if (!(err instanceof LogLockedError) || err.holder.kind !== "daemon") return err;
  const url = `${err.holder.url ?? "URL"}/v1/sessions/${id}/${route}`;
  return inDaemon(id, err.holder, `${what} through the daemon: POST ${url} with a controller token${also}`);
}
