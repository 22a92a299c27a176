// Processes the bench starts during its rounds (the SSE watchers, the baselines' runners, Brain's runners) come
// from one spawn host, as a daemon's runners do (src/harnesses/process/spawner.ts): a fork of this process, which
// hosts Brain and every baseline, makes each page any side writes next fault once, inside the timed part of the
// round that follows.
import { minimalEnvironment } from "../../src/harnesses/process/environment.js";
import { type RemoteChild, Spawner } from "../../src/harnesses/process/spawner.js";
import { track } from "./cleanup.js";

/** Never released: the host lives as long as the bench (its channel does not keep the process alive). */
export const benchSpawner = new Spawner();
benchSpawner.use();

/**
 * `command args` started by the bench's spawn host with the minimal environment, its stderr ours. `ownGroup`: in
 * a process group and session of its own, as Brain's runners (and the baselines' runners, LIKE_BRAIN_RUNNER);
 * otherwise in the bench's, as a plain spawn (the kernel's autogroup schedules a session as one).
 */
export async function spawnViaHost(command: string, args: string[], ownGroup = true): Promise<RemoteChild> {
  const env = minimalEnvironment(process.env);
  const child = await benchSpawner.start({ command, args, env, detached: ownGroup });
  track(child);
  child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk));
  return child;
}
