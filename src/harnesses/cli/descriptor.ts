// A CLI family as a catalog entry: its settings are `cli.<family>` in brain.config.json, its one harness is a
// CliFamilyFactory (cheap: the family's adapter is imported when a session opens), and it can run behind a
// launcher (a dev container's exec).
import { z } from "zod";
import type { ContainerLimits } from "../../protocol/config.js";
import type { FamilyDescriptor } from "../family.js";
import { ContainerRecords } from "../http/container-records.js";
import { dockerExecShim, installDir } from "../nui/install-paths.js";
import { splitCommandLine } from "../process/command.js";
import { type DockerSandboxSettings, SandboxableFactory } from "../sandbox/docker-sandbox.js";
import { type CliFamilyDescriptor, CliFamilyFactory } from "./family.js";
import type { CliFactoryOptions } from "./options.js";

/** Host-side settings of one CLI family (brain.config.json `cli.<family>`). */
export const CliHarnessSettings = z.strictObject({
  /** The CLI program: a path, or a name looked up in node_modules/.bin and then PATH. */
  bin: z.string().min(1).optional(),
  /** Words run in front of the CLI (a sandbox, `nice`, …): an array, or a string split on spaces. */
  launcher: z.union([z.string().min(1), z.array(z.string()).min(1)]).optional(),
  /** Variables added to the CLI's environment. Never put provider keys here. */
  env: z.record(z.string(), z.string()).optional(),
  /**
   * false: the CLI gets the provider's key in its environment, where every command it runs can read it, instead
   * of a token of Brain's loopback credential proxy. Only for a launcher that cuts it off from 127.0.0.1.
   */
  credential_proxy: z.boolean().optional(),
});
export type CliHarnessSettings = z.infer<typeof CliHarnessSettings>;

export function cliFactoryOptions(settings: CliHarnessSettings | undefined): CliFactoryOptions {
  if (!settings) return {};
  const launcher =
    typeof settings.launcher === "string" ? splitCommandLine(settings.launcher) : settings.launcher;
  return {
    ...(settings.bin ? { bin: settings.bin } : {}),
    ...(launcher ? { launcher } : {}),
    ...(settings.env ? { env: settings.env } : {}),
    ...(settings.credential_proxy === false ? { credentialProxy: false } : {}),
  };
}

/**
 * Codex runs each shell command in its own sandbox (bubblewrap, in a user namespace), which Docker's default
 * seccomp profile forbids; without it every command fails. The container stays without network and extra
 * capabilities; codex's sandbox then confines its commands further inside it.
 */
const CODEX_DOCKER_ARGS = ["--security-opt", "seccomp=unconfined"];

/**
 * How a CLI family runs with sandbox: docker; `home`: Brain's, where its containers are recorded; `limits`: the
 * operator's bounds on each container.
 */
export function sandboxSettings(
  harness: string,
  home?: string,
  limits?: ContainerLimits,
): DockerSandboxSettings {
  return {
    ...(limits ? { limits } : {}),
    shim: { node: process.execPath, script: dockerExecShim() },
    installDir: installDir(),
    ...(home ? { records: new ContainerRecords(home) } : {}),
    ...(harness === "codex" ? { dockerArgs: CODEX_DOCKER_ARGS } : {}),
  };
}

export function cliFamily(family: CliFamilyDescriptor, summary: string): FamilyDescriptor {
  return {
    name: family.harness,
    summary,
    settings: { block: "cli", schema: CliHarnessSettings },
    capabilities: { steering: family.steering, images: false, sharedHost: "never", provider: "always" },
    factories: (ctx) => {
      const options = cliFactoryOptions(ctx.settings as CliHarnessSettings);
      const { launcher: _, ...host } = options;
      // sandbox: docker replaces the host's launcher with the container's exec.
      return [
        new SandboxableFactory(
          // Its programs start from the catalog's spawn host; those of a sandbox's container are forked here.
          new CliFamilyFactory(family, { ...options, ...(ctx.spawner ? { spawner: ctx.spawner } : {}) }),
          (launcher) => new CliFamilyFactory(family, { ...host, launcher }),
          sandboxSettings(family.harness, ctx.brainHome, ctx.config.containers),
        ),
      ];
    },
    // Inside a dev container the host's launcher (a sandbox of the host) does not apply: the container is one.
    launched: (ctx, launcher) => {
      const { launcher: _, ...host } = cliFactoryOptions(ctx.settings as CliHarnessSettings);
      return [new CliFamilyFactory(family, { ...host, launcher })];
    },
  };
}
