// The nui-compatible harness families, ready for the registry: `remote` and `docker` (HTTP/SSE agents),
// `devcontainer` (another harness inside a provisioned dev container) and one `ext:<extension>/<id>` per
// harness an installed extension contributes. Broken extensions are reported in `problems`, not thrown.
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { HarnessFactory } from "../../core/harness.js";
import type { NuiSettings } from "../../protocol/config.js";
import { DevcontainerFactory } from "../devcontainer/factory.js";
import { listExtensions } from "../ext/extensions.js";
import { ExtensionHarnessFactory } from "../ext/factory.js";
import { pythonSdkDir } from "../ext/sdk-paths.js";
import type { Timeouts } from "../ext/transport.js";
import { DockerFactory } from "../http/docker.js";
import { DockerCli } from "../http/docker-cli.js";
import { RemoteFactory } from "../http/remote.js";
import { ProcessFactory } from "../process/factory.js";
import { NuiApiServer } from "./api-server.js";
import { devcontainerShim, installDir } from "./install-paths.js";

/** A runner command line that can also run inside a dev container. */
export interface RunnerCommand {
  command: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
}

export interface NuiFamilyOptions {
  /** $BRAIN_HOME: extensions live in `<home>/extensions`. */
  brainHome: string;
  settings?: NuiSettings;
  /** Relative paths in `settings` resolve against this (the config file's dir). */
  configDir?: string;
  /** Runners the devcontainer family can run inside (echo, pi, the config's runners). */
  runners?: Record<string, RunnerCommand>;
  /** CLI families that run behind a launcher, by name: `(launcher) => new ClaudeCodeFactory({ launcher })`. */
  cliFamilies?: Record<string, (launcher: string[]) => HarnessFactory>;
  /** HOME for extension hosts (tests use a scratch dir). Default: the user's home. */
  hostHome?: string;
  /** Timeouts of extension harnesses (open, interrupt grace, shutdown). */
  extensionTimeouts?: Partial<Timeouts>;
}

export function extensionsDir(brainHome: string): string {
  return join(brainHome, "extensions");
}

export function nuiHarnessFactories(options: NuiFamilyOptions): {
  factories: HarnessFactory[];
  problems: string[];
} {
  const settings = options.settings ?? {};
  const dir = options.configDir ?? process.cwd();
  const api = new NuiApiServer();
  const factories: HarnessFactory[] = [
    new RemoteFactory(),
    new DockerFactory("docker", new DockerCli(settings.docker ?? "docker")),
  ];
  const runners = options.runners ?? {};
  const cli = options.cliFamilies ?? {};
  factories.push(
    new DevcontainerFactory({
      inner: (name, launcher) => {
        const family = cli[name];
        if (family) return family(launcher);
        const runner = runners[name];
        if (!runner) return undefined;
        // Inside the container, node is the image's: the host's absolute node path means nothing there.
        const command = runner.command === process.execPath ? "node" : runner.command;
        const [program, ...prefix] = launcher;
        return new ProcessFactory({
          name,
          command: program!,
          args: [...prefix, command, ...runner.args],
          // Made for one session in one container: a spare would outlive both.
          spares: 0,
          ...(runner.cwd ? { cwd: runner.cwd } : {}),
          ...(runner.env ? { env: runner.env } : {}),
        });
      },
      innerNames: () => [...Object.keys(cli), ...Object.keys(runners)].sort(),
      shim: { node: process.execPath, script: devcontainerShim() },
      installDir: installDir(),
      programs: {
        ...(settings.devcontainer ? { devcontainer: settings.devcontainer } : {}),
        ...(settings.docker ? { docker: settings.docker } : {}),
      },
    }),
  );
  const home = options.hostHome ?? homedir();
  const { extensions, problems } = listExtensions(extensionsDir(options.brainHome));
  for (const extension of extensions) {
    for (const harness of extension.harnesses) {
      factories.push(
        new ExtensionHarnessFactory(extension, harness, {
          api,
          pythonSdkDir: pythonSdkDir(),
          home,
          ...(options.extensionTimeouts ? { timeouts: options.extensionTimeouts } : {}),
          ...(settings.connections_dir ? { connectionsDir: resolve(dir, settings.connections_dir) } : {}),
        }),
      );
    }
  }
  return { factories, problems };
}
