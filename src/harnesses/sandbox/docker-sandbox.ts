// `sandbox: docker` for the harnesses that run behind a launcher (the CLI agents, the runners): the session's
// CLI runs inside a container Brain starts for the session, with no network (`--network none`) but Brain's
// credential proxy bridged in through the container's network namespace (the proxy, on this host, reaches a
// provider anywhere), or, for a CLI that talks to its provider itself, the provider when that is on this host's
// loopback (a local model server, the tests' fake provider), bridged the same way. The harness itself stays on the host, so permissions and questions reach
// Brain's clients as they do without a sandbox; the CLI's command goes through `docker exec` (docker-exec-shim),
// and the native dir, the working directory and Brain's install (read-only) are mounted at their own paths, so
// the CLI's state lands in the native dir and checkpoints, restore and fork work as on the host.
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { isInside } from "../../core/checkpoints/paths.js";
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import type { ContainerLimits } from "../../protocol/config.js";
import { bindMount } from "../bind-mount.js";
import { type DescribableFactory, isDescribable, isProxying } from "../cli/family.js";
import { ContainedHarness } from "../contained-harness.js";
import { dockerEnvFlags, hostDockerConfig } from "../exec-relay.js";
import { Container, sessionLabels, sweepSession } from "../http/container.js";
import { containerLimits, limitArgs } from "../http/container-limits.js";
import { type ContainerRecords, RUN_LABEL } from "../http/container-records.js";
import { closedWhileOpening, closedWhileStarting, DockerCli, DockerStopped } from "../http/docker-cli.js";
import { ContainerBridge, privateDir, removePrivateDir } from "./container-bridge.js";
import { type SandboxOptions, sandboxOptions, withoutSandboxOptions } from "./options.js";

/** The base image scripts/docker-engine.sh builds (keep its RECIPE in step). */
export const BASE_IMAGE = `brain/base:node-${process.versions.node}-r4`;

export interface DockerSandboxSettings {
  /** The shim (dist/src/harnesses/sandbox/docker-exec-shim.js) and the node that runs it. */
  shim: { node: string; script: string };
  /** Brain's install, mounted read-only so its CLIs and runners run inside. */
  installDir: string;
  docker?: DockerCli;
  stopMs?: number;
  /** `docker run` (may pull the image); default 300 s. */
  runMs?: number;
  /** More `docker run` arguments this harness needs (codex: its own sandbox inside the container). */
  dockerArgs?: string[];
  /** Why this harness cannot run in the sandbox yet: `sandbox: docker` is then refused with it. */
  unsupported?: string;
  /** Where the session's container is recorded while it runs (the next Brain removes it if this one dies). */
  records?: ContainerRecords;
  /** The operator's bounds on each container (brain.config.json `containers`); default DEFAULT_CONTAINER_LIMITS. */
  limits?: ContainerLimits;
  /** false: the harness calls no model provider (its family's FamilyCapabilities.provider); default true. */
  needsProvider?: boolean;
}

/**
 * A harness factory that runs its harness as usual, or, when the session's options say `sandbox: docker`,
 * inside a container: `behind(launcher)` is the same harness with the container's exec in front of its command.
 */
export class SandboxableFactory implements HarnessFactory {
  readonly name: string;
  readonly supportsSteering: boolean;
  readonly steering?: HarnessFactory["steering"];
  readonly supportsImages?: boolean;
  readonly clientOptions?: HarnessFactory["clientOptions"];
  readonly operatorOptions?: HarnessFactory["operatorOptions"];
  /** The CLI's program and version, for `brain harnesses`: the plain factory's, when it has one. */
  readonly describe?: DescribableFactory["describe"];

  constructor(
    private readonly plain: HarnessFactory,
    private readonly behind: (launcher: string[]) => HarnessFactory,
    private readonly settings: DockerSandboxSettings,
  ) {
    this.name = plain.name;
    this.supportsSteering = plain.supportsSteering;
    if (plain.steering) this.steering = plain.steering;
    if (plain.supportsImages) this.supportsImages = plain.supportsImages;
    if (plain.clientOptions) this.clientOptions = plain.clientOptions;
    if (plain.operatorOptions) this.operatorOptions = plain.operatorOptions;
    if (isDescribable(plain)) this.describe = (cache) => plain.describe(cache);
  }

  pinned(config: HarnessOptions["config"]): string | undefined {
    return this.plain.pinned?.(config);
  }

  agentSide(config: HarnessOptions["config"], nativeDir?: string) {
    return this.plain.agentSide?.(config, nativeDir);
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const sandbox = sandboxOptions(options.config.options, this.name);
    if (sandbox.sandbox === "none") return this.plain.open(withoutSandboxOptions(options));
    if (this.settings.unsupported) {
      throw new HarnessError(
        "brain_error",
        `harness "${this.name}" cannot run with sandbox: docker yet: ${this.settings.unsupported}`,
      );
    }
    // The plain factory is the same family with the same host settings as the one behind the container's exec.
    const needs = this.settings.needsProvider === false ? { needsProvider: false } : {};
    const route: ProviderRoute = isProxying(this.plain)
      ? { unproxied: this.plain.unproxied(options), vendorDefault: !!options.provider.api_key, ...needs }
      : {
          unproxied: "this harness talks to its provider itself",
          vendorDefault: !!options.provider.api_key,
          ...needs,
        };
    return openInDocker(this.name, sandbox, options, this.behind, this.settings, route);
  }

  async close(): Promise<void> {
    await (this.plain as { close?: () => Promise<void> }).close?.();
  }
}

/**
 * Brain's install, and where its node_modules really are when that is a link (a worktree sharing another
 * checkout's): mounted read-only at their own paths, so the CLIs' paths hold inside.
 */
export function installMounts(dir: string): string[] {
  const modules = join(dir, "node_modules");
  const real = existsSync(modules) ? realpathSync(modules) : modules;
  return real === modules || real.startsWith(`${dir}/`) ? [dir] : [dir, real];
}

/**
 * A directory mounted into a session's container (an agent definition's working directory) that holds Brain's
 * home, or lies inside it, would hand the agent there every session's logs and checkpoints and Brain's own
 * config: refused, naming the option. Compared where links lead, as Docker mounts them.
 */
export function refuseBrainHome(
  dir: string,
  home: string | undefined,
  harness: string,
  option: string,
): void {
  if (home === undefined) return;
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  const [mounted, brainHome] = [real(dir), real(home)];
  if (!isInside(mounted, brainHome) && !isInside(brainHome, mounted)) return;
  throw new HarnessError(
    "brain_error",
    `harness "${harness}": config.options.${option} "${dir}" ${isInside(mounted, brainHome) ? "holds" : "is inside"} Brain's home ${home}; mounted into the session's container it would give the agent every session's files and Brain's config; choose a working directory outside Brain's home`,
  );
}

/** How a container's CLI reaches a provider off this host's loopback, for loopbackProviderPort. */
export interface ProviderRoute {
  /** Why the CLI will talk to its provider itself; undefined: it goes through Brain's credential proxy. */
  unproxied: string | undefined;
  /** The setting that takes the container's network away, and the way out of it, for the refusal. */
  setting?: { what: string; instead: string };
  /**
   * The CLI, given a key and no base_url, talks to its vendor's own endpoint: off this host's loopback, so it is
   * refused as a remote provider is when it will not go through the proxy (it would get the key and reach nothing).
   */
  vendorDefault?: boolean;
  /** false: the harness calls no model provider, so it needs no way to one (FamilyCapabilities.provider). */
  needsProvider?: boolean;
}

const SANDBOX_SETTING = { what: "with sandbox: docker", instead: "drop the sandbox" };

/**
 * The provider's port when it is on this host's loopback: the one address the sandbox may reach. A provider
 * elsewhere is reached only by a CLI that goes through Brain's credential proxy, which runs on this host and is
 * bridged in instead: `route.unproxied` is why this one will not (undefined: it will, and nothing of the
 * provider's is bridged). Without `route` the CLI is taken to talk to its provider itself. A harness that calls no
 * provider gets nothing bridged, wherever its base_url points; one that needs a provider and has neither a
 * base_url nor a key for the proxy to use is refused: it would have no provider to reach, and fail only late.
 */
export function loopbackProviderPort(
  baseUrl: string | undefined,
  harness: string,
  route: ProviderRoute = { unproxied: "it talks to its provider itself" },
): number[] {
  if (route.needsProvider === false) return [];
  const url = baseUrl ? new URL(baseUrl) : undefined;
  if (!url || !["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) {
    const { unproxied, setting = SANDBOX_SETTING } = route;
    // Through the proxy with the provider's key: the proxy, on this host, reaches the vendor's endpoint.
    if (unproxied === undefined && (url || route.vendorDefault)) return [];
    if (!url && !route.vendorDefault) {
      throw new HarnessError(
        "brain_error",
        `harness "${harness}" ${setting.what} runs with no network, and its provider has no base_url and no api_key: nothing inside could reach a model (${unproxied ?? "it needs one"}); point the provider's base_url at a loopback proxy or model server (http://127.0.0.1:PORT), give the provider an api_key for Brain's credential proxy to use, or ${setting.instead}`,
      );
    }
    const where = url ? url.origin : "(no base_url: its vendor's own endpoint)";
    throw new HarnessError(
      "brain_error",
      `harness "${harness}" ${setting.what} runs its CLI with no network, and its provider ${where} is not on this host's loopback; Brain's credential proxy could reach it from this host, but ${unproxied}; give the provider an api_key and leave credential_proxy on, point the provider's base_url at a loopback proxy or model server (http://127.0.0.1:PORT), or ${setting.instead}`,
    );
  }
  return [Number(url.port || (url.protocol === "https:" ? 443 : 80))];
}

async function openInDocker(
  name: string,
  sandbox: SandboxOptions,
  options: HarnessOptions,
  behind: (launcher: string[]) => HarnessFactory,
  settings: DockerSandboxSettings,
  route: ProviderRoute,
): Promise<Harness> {
  const docker = settings.docker ?? new DockerCli();
  const stopMs = settings.stopMs ?? 30_000;
  docker.assertInstalled(name);
  const hostPorts = loopbackProviderPort(options.provider.base_url, name, route);
  const owner = { id: options.sessionId, ...(settings.records ? { home: settings.records.home } : {}) };
  await sweepSession(docker, owner, stopMs, undefined, options.signal).catch((err: Error) => {
    throw err instanceof DockerStopped ? closedWhileOpening(name, err) : err;
  });
  // A cwd that is no absolute, existing directory is left to the harness to refuse, in its own words.
  const cwd = sandbox.cwd;
  const ownCwd = cwd && isAbsolute(cwd) && existsSync(cwd) && !cwd.startsWith(`${options.dir}/`);
  if (ownCwd) refuseBrainHome(cwd, settings.records?.home, name, "cwd");
  // --mount, never -v: -v splits its value on colons, so a path holding one failed the run in Docker's words
  // ("invalid spec: …: too many colons"); bindMount refuses by name the paths --mount cannot carry (a comma would
  // start a field of its own), before anything is started.
  const mounts = [
    ...installMounts(settings.installDir).map((dir) =>
      bindMount(dir, name, "Brain's install directory", true),
    ),
    bindMount(options.dir, name, "the session's native dir"),
    ...(ownCwd ? [bindMount(cwd, name, "config.options.cwd")] : []),
  ];
  const user =
    process.getuid?.() && process.getgid ? ["--user", `${process.getuid?.()}:${process.getgid()}`] : [];
  const image = sandbox.sandbox_image ?? BASE_IMAGE;
  const toolsDir = privateDir();
  let started: Awaited<ReturnType<typeof docker.run>>;
  const pending = settings.records?.starting(docker.program);
  try {
    started = await docker.run(
      [
        "run",
        "-d",
        ...sessionLabels(owner),
        "--label",
        `brain.harness=${name}`,
        ...(pending ? ["--label", `${RUN_LABEL}=${pending.run}`] : []),
        "--network",
        "none",
        ...user,
        ...(settings.dockerArgs ?? []),
        ...limitArgs(containerLimits(settings.limits)),
        ...[...mounts, bindMount(toolsDir, name, "the session's tools directory")].flatMap((mount) => [
          "--mount",
          mount,
        ]),
        image,
        // Something to keep the container up; the CLI runs through `docker exec`.
        "sleep",
        "2147483647",
      ],
      settings.runMs ?? 300_000,
      options.signal,
    );
  } catch (err) {
    removePrivateDir(toolsDir);
    // A run that timed out (or failed) may have started the container all the same: removed by its label. One the
    // daemon was still creating is listed by no sweep: the run's record stays, for the next start's sweep.
    await sweepSession(docker, owner, stopMs).catch(() => {});
    throw err instanceof DockerStopped ? closedWhileStarting(name, image, err) : err;
  }
  const id = started.stdout.trim().split("\n").at(-1)?.trim() ?? "";
  const box = new Container(docker, id, image, stopMs, settings.records);
  pending?.settled();
  const bridge = new ContainerBridge(() => box.pid(options.signal), toolsDir, name);
  const release = async () => {
    await bridge.close();
    await box.remove((message) => options.emit({ type: "harness.warning", data: { message } }));
  };
  try {
    if (!id) throw new HarnessError("brain_error", `docker run ${image} printed no container id`);
    // Always entered, even with no provider port: a container that died at once fails the session here.
    await box.pid(options.signal);
    await bridge.reach(hostPorts);
    const launcher = [
      settings.shim.node,
      settings.shim.script,
      "--docker",
      docker.program,
      "--docker-config",
      hostDockerConfig(),
      ...dockerEnvFlags(docker.env),
      "--container",
      id,
      "--",
    ];
    const inner = await behind(launcher).open({
      ...withoutSandboxOptions(options),
      container: bridge.context,
    });
    return new ContainedHarness(inner, release, { box });
  } catch (err) {
    await release();
    throw err instanceof DockerStopped ? closedWhileOpening(name, err, "; its container was removed") : err;
  }
}
