// Where a `remote` or `docker` session's agent is, from `config.options` (an agent definition's
// `harness.host`/`port`, `image`/`containerPort`). Wrong or missing values are named with their fix.
import { z } from "zod";
import { HarnessError } from "../../core/harness.js";
import { describeIssues } from "../../protocol/frames.js";

const Port = z.number().int().min(1).max(65535);

/** Brain appends /info, /run, … to the URL, and quotes it in every error a turn ends with (which clients read). */
const bareUrl = (url: string) => {
  const parsed = new URL(url);
  return !parsed.username && !parsed.password && !parsed.search && !parsed.hash;
};

const Remote = z.object({
  url: z
    .url({ protocol: /^https?$/ })
    .refine(
      bareUrl,
      "give the agent's base URL alone, without user:password, ?query or #fragment (Brain appends /info and /run to its path, and quotes it in errors)",
    )
    .optional(),
  host: z.string().min(1).optional(),
  port: Port.optional(),
});

const Docker = z.object({
  image: z.string().min(1, "the image name is empty"),
  containerPort: Port,
  /** Extra `docker run` arguments (volumes, networks), placed before the image. */
  docker_args: z.array(z.string()).optional(),
  /**
   * "published" (the default): the agent's port is published on this host's 127.0.0.1 (the agent listens on
   * 0.0.0.0). "none": the container has no network at all (`--network none`); Brain reaches its port through the
   * container's network namespace (nsenter: Brain runs as root on Linux), so the agent may listen on 127.0.0.1.
   */
  network: z.enum(["published", "none"]).default("published"),
  /** With network "none": host loopback ports the container reaches at its own 127.0.0.1 (a local model server). */
  host_ports: z.array(Port).default([]),
});

function parse<T>(schema: z.ZodType<T>, options: unknown, harness: string, fix: string): T {
  const parsed = schema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  throw new HarnessError(
    "brain_error",
    `harness "${harness}": config.options: ${describeIssues(parsed.error)}; ${fix}`,
  );
}

/** The agent's base URL: `url`, or `http://host:port`. */
export function remoteUrl(options: Record<string, unknown> | undefined, harness: string): string {
  const fix =
    'set config.options.url ("http://10.0.1.42:9090") or host and port (an agent definition\'s harness.host and harness.port)';
  const remote = parse(Remote, options, harness, fix);
  if (remote.url) return remote.url;
  if (remote.host && remote.port) {
    const host = remote.host.includes(":") && !remote.host.startsWith("[") ? `[${remote.host}]` : remote.host;
    return `http://${host}:${remote.port}`;
  }
  throw new HarnessError("brain_error", `harness "${harness}": no agent address; ${fix}`);
}

export function dockerOptions(options: Record<string, unknown> | undefined, harness: string) {
  const docker = parse(
    Docker,
    options,
    harness,
    'set config.options.image and containerPort (an agent definition\'s harness.image and harness.containerPort, e.g. image: "my-agent:latest", containerPort: 9090)',
  );
  if (docker.host_ports.length && docker.network !== "none") {
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": config.options.host_ports needs network: "none" (a published container reaches the host through Docker's own network)`,
    );
  }
  return docker;
}
