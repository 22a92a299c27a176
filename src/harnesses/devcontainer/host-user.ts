// A dev container when Brain does not run as root. The container's commands write the session's directories
// (mounted at their own paths) as the container's user, and the Dev Container CLI's uid update is off (it would
// build an image); so files written as root inside would be root's on this host, where Brain could neither
// checkpoint nor delete them. And a `network: "none"` container's provider is bridged through its network
// namespace with nsenter, which needs root. Both are refused before `devcontainer up`, with what to change.
import { HarnessError } from "../../core/harness.js";
import { type DockerCli, DockerStopped } from "../http/docker-cli.js";

export interface HostUserCheck {
  harness: string;
  /** Brain's uid; undefined where there is none (not POSIX). */
  uid: number | undefined;
  network: "none" | "bridge";
  remoteUser: string | undefined;
  /** Ports of this host's loopback the container must reach (the provider's). */
  hostPorts: number[];
  docker: DockerCli;
  /** The session's close while it opens: it stops `docker info`. */
  signal?: AbortSignal;
}

/** Throws a HarnessError naming the option to change when this host user cannot run the container as set. */
export async function assertHostUser(check: HostUserCheck): Promise<void> {
  const { harness, uid, network, remoteUser, hostPorts } = check;
  if (uid === undefined || uid === 0) return;
  if (network === "none" && hostPorts.length) {
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": Brain runs as uid ${uid}, not root, and a network: "none" container reaches its provider on this host's loopback (port ${hostPorts.join(", ")}) through the container's network namespace (nsenter), which needs root; run Brain as root, or set network: "bridge" (an agent definition's harness.network) with a provider the container can reach on Docker's network`,
    );
  }
  // Rootless Docker maps the container's root to this user: its files are Brain's already.
  if (!remoteUser && !(await rootlessDocker(check.docker, check.signal))) {
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": Brain runs as uid ${uid}, not root, and the container's commands would run as the image's user (root unless the image sets another), writing files into the session's directories that Brain could then neither checkpoint nor delete; set remoteUser (an agent definition's harness.remoteUser) to a user of the image whose uid is ${uid} (the project's base image has "node", uid 1000), run Brain as root, or use rootless Docker`,
    );
  }
}

async function rootlessDocker(docker: DockerCli, signal?: AbortSignal): Promise<boolean> {
  const info = await docker
    .run(["info", "--format", "{{json .SecurityOptions}}"], 20_000, signal)
    .catch((err: Error) => {
      if (err instanceof DockerStopped) throw err;
      return { stdout: "" };
    });
  return info.stdout.includes("rootless");
}
