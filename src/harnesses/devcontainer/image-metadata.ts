// What a dev container's image may ask for. The Dev Container CLI merges the image's `devcontainer.metadata` label
// into the devcontainer.json Brain generates, and cannot be told not to; some of its properties reach past the
// container: `privileged`, `mounts` (a bind of `/` or of Docker's socket is the host; a named volume is shared with
// every other session on that image), `capAdd`, `securityOpt`, `hostRequirements.gpu` (every GPU of the host).
// Prebuilt images carry them from the features they were built with (docker-in-docker asks for privileged). So the
// image is looked at before `devcontainer up`, and one that asks for any of them is refused, with how to make one
// that does not.
import { HarnessError } from "../../core/harness.js";
import { closedWhilePulling, type DockerCli, DockerStopped } from "../http/docker-cli.js";

export const METADATA_LABEL = "devcontainer.metadata";

/** What the label asks for that reaches past the container, as words for the error; empty when nothing. */
export function hostGrants(label: string | undefined): string[] {
  if (label === undefined || label.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(label);
  } catch {
    return [
      `a ${METADATA_LABEL} label that is no JSON (what the Dev Container CLI would make of it is unknown)`,
    ];
  }
  const entries = Array.isArray(parsed) ? parsed : [parsed];
  const grants: string[] = [];
  for (const entry of entries) {
    if (!entry || typeof entry !== "object") continue;
    const e = entry as Record<string, unknown>;
    if (e.privileged === true) grants.push("privileged: true");
    for (const key of ["mounts", "capAdd", "securityOpt"]) {
      const value = e[key];
      if (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null)
        grants.push(`${key}: ${JSON.stringify(value)}`);
    }
    // The CLI runs the container with `--gpus all` for it when this host has a GPU runtime: the host's devices.
    const gpu = (e.hostRequirements as Record<string, unknown> | undefined)?.gpu;
    if (gpu !== undefined && gpu !== false && gpu !== null)
      grants.push(`hostRequirements.gpu: ${JSON.stringify(gpu)}`);
  }
  return grants;
}

/**
 * The user the label has the container's commands run as (the last entry's remoteUser, else containerUser, as the
 * Dev Container CLI merges them); undefined when it names none.
 */
export function labelUser(label: string | undefined): string | undefined {
  const entries = labelEntries(label);
  if (!entries) return undefined;
  const last = (key: string) =>
    entries.findLast((e) => e && typeof e === "object" && typeof e[key] === "string")?.[key] as
      | string
      | undefined;
  return last("remoteUser") ?? last("containerUser");
}

/**
 * The image's labels, pulled first when it is not on this host (as `devcontainer up` would), or a HarnessError
 * that names the image and what to do. `stopped` (the session's close) stops the pull; the daemon drops what it had
 * pulled of the image with it.
 */
async function labelOf(
  docker: DockerCli,
  image: string,
  harness: string,
  pullMs: number,
  stopped?: AbortSignal,
) {
  const inspect = () =>
    docker.run(
      ["image", "inspect", "--format", `{{index .Config.Labels "${METADATA_LABEL}"}}`, image],
      30_000,
      stopped,
    );
  try {
    return (await inspect()).stdout.trim();
  } catch (err) {
    if (!/no such image/i.test((err as Error).message)) throw err;
  }
  await docker.run(["pull", image], pullMs, stopped).catch((err: Error) => {
    if (err instanceof DockerStopped) throw closedWhilePulling(harness, image);
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": image "${image}" is not on this host and could not be pulled (${err.message}); build or pull it, or set image (an agent definition's harness.image) to one this host has`,
    );
  });
  return (await inspect()).stdout.trim();
}

/**
 * The `nth` (from 1) command the label gives for lifecycle `hook` (`postCreateCommand`…), as JSON: the CLI runs each
 * entry's in the label's order. Undefined when the label has no such one.
 */
export function lifecycleCommand(label: string | undefined, hook: string, nth: number): string | undefined {
  const entries = labelEntries(label);
  if (!entries) return undefined;
  const commands = entries.flatMap((e) => (e && typeof e === "object" && e[hook] ? [e[hook]] : []));
  const command = commands[nth - 1];
  return command === undefined ? undefined : JSON.stringify(command);
}

/**
 * Throws a HarnessError when `image` asks in its devcontainer.metadata for anything that reaches past its container;
 * else resolves with the label (undefined when the image has none).
 */
export async function refuseHostGrants(
  docker: DockerCli,
  image: string,
  harness: string,
  pullMs: number,
  stopped?: AbortSignal,
): Promise<string | undefined> {
  const printed = await labelOf(docker, image, harness, pullMs, stopped);
  // `docker inspect` prints "<no value>" for a label the image does not have.
  const label = printed === "<no value>" ? undefined : printed;
  const grants = hostGrants(label);
  if (grants.length === 0) return label;
  throw new HarnessError(
    "brain_error",
    `harness "${harness}": image "${image}" asks in its ${METADATA_LABEL} label for ${grants.join(", ")}, which the Dev Container CLI would grant the session's container, reaching past it into this host; use an image without them (rebuilt without the features that add them, or one built FROM it with LABEL ${METADATA_LABEL}="[]")`,
  );
}

/** The label's entries (one object or a list of them, as the Dev Container CLI writes it); undefined: not JSON. */
function labelEntries(label: string | undefined): Record<string, unknown>[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(label ?? "");
  } catch {
    return undefined;
  }
  return (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
}
