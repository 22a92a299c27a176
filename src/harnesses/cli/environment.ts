// A CLI agent's environment: the runner protocol's minimal variables (docs/protocol.md#runner-stdio-protocol), a HOME of its own under the native dir (so nothing of
// the host user's config, logins or history leaks in, and everything the CLI writes stays with the session),
// and the family's additions.
import { join } from "node:path";
import type { ContainerUser } from "../../core/harness.js";
import { makeAgentDirSync } from "../agent-files.js";
import { minimalEnvironment } from "../process/environment.js";

export function cliEnvironment(
  nativeDir: string,
  family: Record<string, string>,
  host: Record<string, string> = {},
  owner?: ContainerUser,
): Record<string, string> {
  const home = join(nativeDir, "home");
  // The agent may have swapped it for a link (the native dir is mounted into containers): the CLI, on the host,
  // would then write its config and history wherever that leads.
  // Made, it is the user's the CLI runs as (a dev container's remoteUser), or the CLI could write nothing there.
  makeAgentDirSync(nativeDir, "home", owner);
  return minimalEnvironment(process.env, { HOME: home, TERM: "dumb", ...host, ...family });
}
