// A command that writes a session (a checkpoint, a rebuild) is refused while the daemon has the session open: one
// process writes a session at a time. The lock's own hint (`brain run --server`, `brain attach`) prompts; it takes no
// checkpoint and rebuilds nothing, so such a command names the daemon's route that does what it was asked.
import { inDaemon, LogLockedError } from "../store/fs/log-lock.js";

/**
 * `err` as it stands, unless it is the daemon's lock on session `id`: then that, naming `POST URL/v1/sessions/ID/<route>`
 * (and `also`, another way there is, as the web UI's button).
 */
export function throughDaemon(err: unknown, id: string, route: string, what: string, also = ""): unknown {
  return named(err, id, `${what} through the daemon: POST`, `/${route} with a controller token${also}`);
}

/** `err` as it stands, unless it is the daemon's lock on session `id`: then that, naming its DELETE (`query` on it). */
export function deleteThroughDaemon(err: unknown, id: string, query: string): unknown {
  return named(err, id, "delete it through the daemon: DELETE", `${query} with a controller token`);
}

function named(err: unknown, id: string, before: string, after: string): unknown {
  if (!(err instanceof LogLockedError) || err.holder.kind !== "daemon") return err;
  return inDaemon(id, err.holder, `${before} ${err.holder.url ?? "URL"}/v1/sessions/${id}${after}`);
}
