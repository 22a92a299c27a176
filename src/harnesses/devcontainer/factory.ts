// `devcontainer`: a harness Brain already has (a CLI agent or a runner: `innerHarness`) run inside a dev
// container Brain provisions for the session. Per session: generate `<native>/devcontainer/.devcontainer/
// devcontainer.json`, `devcontainer up --workspace-folder <that dir>`, open the inner harness with a launcher
// that puts `docker exec` into the container `up` made in front of its command (exec-shim.ts), and on close close the
// inner harness and remove the container. The inner harness keeps its state in `<native>/inner`, the only part
// of the native dir mounted into the container: the host reads the devcontainer.json (the exec shim, on every
// start of the inner command), so nothing inside may reach it to plant a link there. The container
// has no network by default (`network: "none"`): like the docker sandbox does, Brain's credential proxy is bridged
// into it for an inner CLI that goes through the proxy (its provider may then be anywhere), or the inner harness's
// provider when that is on this host's loopback; and so are its servers and Brain's tool endpoint.
import { lstatSync, rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { isInside } from "../../core/checkpoints/paths.js";
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import type { ContainerLimits } from "../../protocol/config.js";
import { describeIssues } from "../../protocol/frames.js";
import { makeAgentDirSync } from "../agent-files.js";
import { isProxying } from "../cli/family.js";
import { ContainedHarness } from "../contained-harness.js";
import { dockerEnvFlags, dockerLocation, hostDockerConfig } from "../exec-relay.js";
import { Container, sessionLabels, sweepSession } from "../http/container.js";
import { containerLimits, limitArgs } from "../http/container-limits.js";
import { type ContainerRecords, RUN_LABEL } from "../http/container-records.js";
import { closedWhileOpening, DockerCli, DockerStopped, dockerEnvironment } from "../http/docker-cli.js";
import { ContainerBridge, privateDir } from "../sandbox/container-bridge.js";
import {
  installMounts,
  loopbackProviderPort,
  type ProviderRoute,
  refuseBrainHome,
} from "../sandbox/docker-sandbox.js";
import { DevcontainerCli, type DevcontainerPrograms, defaultPrograms } from "./cli.js";
import { DEFAULT_DEVCONTAINER_IMAGE, devcontainerJson, writeDevcontainerJson } from "./config.js";
import { assertHostUser } from "./host-user.js";
import { labelUser, lifecycleCommand, refuseHostGrants } from "./image-metadata.js";

/**
 * Of Brain's environment, what the Dev Container CLI gets: where docker, its config and its daemon are, none of them
 * a secret. The CLI expands `${localEnv:NAME}` in an image's devcontainer.metadata label (its containerEnv…) from its
 * own environment, and the image is anyone's: given all DOCKER_* variables, as Brain's own docker commands are, it
 * put a host's DOCKER_PASSWORD or DOCKER_AUTH_CONFIG (docker's registry credentials) into the container. Brain pulls
 * the image itself before `up` (refuseHostGrants), with its docker commands' environment, so `up` needs no
 * registry credentials.
 */
export function devcontainerCliEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...dockerLocation(env), ...(env.DOCKER_CONFIG ? { DOCKER_CONFIG: env.DOCKER_CONFIG } : {}) };
}

/** Builds the inner harness's factory with `launcher` in front of its command; undefined: no such harness. */
export type InnerFactories = (innerHarness: string, launcher: string[]) => HarnessFactory | undefined;

export interface DevcontainerSettings {
  inner: InnerFactories;
  /** Names the inner harnesses `inner` knows, for the error when one is unknown. */
  innerNames: () => string[];
  /**
   * Whether an inner harness calls a model provider (its family's FamilyCapabilities.provider); default what its
   * factory says (HarnessFactory.needsProvider). One that does needs a way to it from a network: "none" container.
   */
  needsProvider?: (innerHarness: string) => boolean;
  /** The exec shim (dist/src/harnesses/devcontainer/exec-shim.js) and the node that runs it. */
  shim: { node: string; script: string };
  /** Brain's install, mounted read-only so its CLIs and runners run inside. */
  installDir: string;
  programs?: Partial<DevcontainerPrograms>;
  /**
   * Environment of the devcontainer and docker commands (tests put fakes on its PATH); default what Docker needs
   * of Brain's, and the Dev Container CLI less (devcontainerCliEnvironment).
   */
  env?: NodeJS.ProcessEnv;
  timeouts?: Partial<DevcontainerTimeouts>;
  /** Brain's uid (tests); default this process's. */
  uid?: number;
  /** Where the session's container is recorded while it runs (the next Brain removes it if this one dies). */
  records?: ContainerRecords;
  /**
   * The operator's bounds on each container (brain.config.json `containers`); default DEFAULT_CONTAINER_LIMITS. In
   * the runArgs Brain writes: an image's devcontainer.metadata cannot give run arguments, and its hostRequirements
   * only checks this host.
   */
  limits?: ContainerLimits;
}

export interface DevcontainerTimeouts {
  /** `devcontainer up` (may pull and build the image). */
  upMs: number;
  /** Each lifecycle command of the image `up` runs, unless the session's lifecycleTimeout says otherwise. */
  lifecycleMs: number;
  stopMs: number;
}

const DEFAULT_TIMEOUTS: DevcontainerTimeouts = { upMs: 600_000, lifecycleMs: 300_000, stopMs: 30_000 };

const Options = z.looseObject({
  innerHarness: z.string().min(1),
  image: z.string().min(1).optional(),
  remoteUser: z.string().min(1).optional(),
  /** The agent's working directory on the host (absolute): the container's workspace folder. */
  working_dir: z
    .string()
    .startsWith("/", "must be an absolute path")
    // It is the source of a bind in Docker's --mount, whose fields a comma separates: what followed one would be
    // fields of its own (`/w,source=/` mounts the host's root), past the checks made of the path.
    .refine(
      (dir) => !dir.includes(","),
      "must not contain a comma (Docker's --mount reads one as a field separator)",
    )
    .optional(),
  /**
   * "none": no network but Brain's credential proxy, or the provider when on this host's loopback, bridged in;
   * "bridge": Docker's default network.
   */
  network: z.enum(["none", "bridge"]).default("none"),
  /** Seconds each lifecycle command of the image (postCreateCommand…) may run during `devcontainer up`. */
  lifecycleTimeout: z.number().positive().optional(),
});

/** The directory `devcontainer up` gets as its workspace folder (host-only: never mounted into the container). */
export const WORKSPACE_DIR = "devcontainer";
/** Where the inner harness keeps its state, inside the native dir: the container's default working dir. */
export const INNER_DIR = "inner";

export class DevcontainerFactory implements HarnessFactory {
  /** Whether a session steers is its inner harness's to say (ContainedHarness.steeringOf); listed as possible. */
  readonly supportsSteering = true;
  readonly steering = "per-session";
  private readonly cli: DevcontainerCli;
  private readonly docker: DockerCli;
  private readonly programs: DevcontainerPrograms;
  private readonly timeouts: DevcontainerTimeouts;
  /** The environment of the devcontainer and docker commands Brain runs itself. */
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly settings: DevcontainerSettings,
    readonly name = "devcontainer",
  ) {
    this.programs = { ...defaultPrograms(), ...settings.programs };
    this.env = settings.env ?? dockerEnvironment(process.env);
    this.cli = new DevcontainerCli(this.programs, settings.env ?? devcontainerCliEnvironment(process.env));
    this.docker = new DockerCli(this.programs.docker, this.env);
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...settings.timeouts };
  }

  /** The words put in front of the inner harness's command: `docker exec` into `container`, as `user`. */
  launcher(container: string, workspaceFolder: string, user?: string): string[] {
    const { node, script } = this.settings.shim;
    return [
      node,
      script,
      "--docker",
      this.programs.docker,
      "--docker-config",
      hostDockerConfig(this.env),
      ...dockerEnvFlags(this.env),
      "--container",
      container,
      "--workspace-folder",
      workspaceFolder,
      ...(user ? ["--user", user] : []),
      "--",
    ];
  }

  /**
   * The inner dir and the tools dir to the user the container's commands run as, when that is not root and
   * Brain is: Brain made both (0700, its own), the inner harness keeps its state in one and its tool endpoint's
   * socket and files go in the other. The CLI's uid update would not help (it maps the user to Brain's uid only
   * when that is not root) and is off. The inner dir is handed inside, where a link it holds reaches no further
   * than the container's mounts, and links are changed, not followed; the tools dir is new and empty.
   */
  private async handToRemoteUser(
    up: { containerId: string; remoteUser?: string },
    innerDir: string,
    bridge: ContainerBridge,
    signal?: AbortSignal,
  ) {
    const user = up.remoteUser;
    if (!user || /^(root|0)(:|$)/.test(user) || (this.settings.uid ?? process.getuid?.()) !== 0) return;
    const exec = (args: string[]) => this.docker.run(["exec", ...args], this.timeouts.stopMs, signal);
    await exec(["-u", "root", up.containerId, "chown", "-R", "-h", user, innerDir]);
    const id = (which: "-u" | "-g") => this.idOf(exec, up.containerId, user, which);
    bridge.runAs({ uid: await id("-u"), gid: await id("-g") });
  }

  /** `user`'s uid (`-u`) or gid (`-g`) in the container, as `id` there says (`exec`: a `docker exec`). */
  private async idOf(
    exec: (args: string[]) => Promise<{ stdout: string }>,
    container: string,
    user: string,
    which: "-u" | "-g",
  ) {
    const { stdout } = await exec(["-u", user, container, "id", which]);
    if (!/^\d+$/.test(stdout.trim())) {
      throw new HarnessError(
        "brain_error",
        `harness "${this.name}": \`id ${which}\` as the container's user "${user}" printed ${JSON.stringify(stdout.trim())}, not a number`,
      );
    }
    return Number(stdout.trim());
  }

  /**
   * How `innerHarness` in a network: "none" container reaches its provider: `unproxied` says why it would talk to
   * it itself, not through Brain's credential proxy bridged in (undefined: it goes through the proxy). Asked of the
   * inner family as the docker sandbox asks it; the bridge enters the container's network namespace, which only
   * root may. A CLI family with a key and no base_url talks to its vendor's endpoint, off this host's loopback. An
   * inner harness that calls no provider (its family's capability, or the runner's needs_provider) needs no way.
   */
  private route(innerHarness: string, options: HarnessOptions, uid: number | undefined): ProviderRoute {
    const inner = this.settings.inner(innerHarness, ["launcher"]);
    const vendorDefault = !!options.provider.api_key;
    const needs = this.settings.needsProvider?.(innerHarness) ?? inner?.needsProvider !== false;
    if (!needs) return { unproxied: undefined, needsProvider: false };
    if (!inner || !isProxying(inner)) {
      const unproxied = `${innerHarness} talks to its provider itself (a runner that calls none says so with needs_provider: false in its harnesses entry)`;
      return { unproxied, vendorDefault };
    }
    const family = inner.unproxied(options);
    if (family !== undefined || uid === 0) return { unproxied: family, vendorDefault };
    const unproxied = `Brain runs as ${uid === undefined ? "a user" : `uid ${uid}`}, not root, and cannot enter the container's network namespace (nsenter) to bridge the proxy in; run Brain as root`;
    return { unproxied, vendorDefault };
  }

  /** A close during any step of the open stops that step, and the turn's error names it (closedWhileOpening). */
  open(options: HarnessOptions): Promise<Harness> {
    const stopped = (err: Error) => (err instanceof DockerStopped ? closedWhileOpening(this.name, err) : err);
    return this.opened(options).catch((err: Error) => Promise.reject(stopped(err)));
  }

  private async opened(options: HarnessOptions): Promise<Harness> {
    const parsed = Options.safeParse(options.config.options ?? {});
    if (!parsed.success) {
      throw new HarnessError(
        "brain_error",
        `harness "${this.name}": config.options: ${describeIssues(parsed.error)}; set innerHarness (an agent definition's harness.innerHarness, e.g. claude-code) and optionally image`,
      );
    }
    const { innerHarness, image, remoteUser, working_dir, network, lifecycleTimeout, ...innerOptions } =
      parsed.data;
    if (innerHarness === this.name)
      throw new HarnessError("brain_error", `harness "${this.name}" cannot run itself inside`);
    const workspaceFolder = join(options.dir, WORKSPACE_DIR);
    const innerDir = join(options.dir, INNER_DIR);
    if (working_dir && (isInside(working_dir, workspaceFolder) || isInside(workspaceFolder, working_dir))) {
      throw new HarnessError(
        "brain_error",
        `harness "${this.name}": config.options.working_dir "${working_dir}" would mount ${workspaceFolder} into the container, where Brain keeps the dev container's own config out of its reach; choose a directory outside ${options.dir}, or none for ${innerDir}`,
      );
    }
    // Of Brain's home only the inner dir may be mounted: it is the session's own.
    if (working_dir && !isInside(innerDir, working_dir)) {
      refuseBrainHome(working_dir, this.settings.records?.home, this.name, "working_dir");
    }
    const known = this.settings.innerNames();
    const unknownInner = () =>
      new HarnessError(
        "brain_error",
        `harness "${this.name}": innerHarness "${innerHarness}" cannot run in a dev container; known: ${known.join(", ") || "(none)"}`,
      );
    if (!known.includes(innerHarness)) throw unknownInner();
    const uid = this.settings.uid ?? process.getuid?.();
    const innerConfig = { ...options.config, options: innerOptions };
    const hostPorts =
      network === "none"
        ? loopbackProviderPort(options.provider.base_url, this.name, {
            ...this.route(innerHarness, { ...options, config: innerConfig }, uid),
            setting: {
              what: 'with network: "none"',
              instead: `set network: "bridge" (an agent definition's harness.network)`,
            },
          })
        : [];
    await this.cli.assertReady(this.name, undefined, options.signal);
    const label = await refuseHostGrants(
      this.docker,
      image ?? DEFAULT_DEVCONTAINER_IMAGE,
      this.name,
      this.timeouts.upMs,
      options.signal,
    );
    await assertHostUser({
      harness: this.name,
      uid,
      network,
      // The image's own remoteUser is as good as the config's: the commands run as it all the same.
      remoteUser: remoteUser ?? labelUser(label),
      hostPorts,
      docker: this.docker,
      signal: options.signal,
    });
    // What a crashed host left of this session (a container `devcontainer up` would otherwise reuse).
    const owner = {
      id: options.sessionId,
      ...(this.settings.records ? { home: this.settings.records.home } : {}),
    };
    await sweepSession(this.docker, owner, this.timeouts.stopMs, undefined, options.signal);
    // Mounted as it is: a link left there (when earlier versions mounted the whole native dir) would mount its target.
    if (lstatSync(innerDir, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new HarnessError(
        "brain_error",
        `harness "${this.name}": ${innerDir} is a symbolic link; remove it`,
      );
    }
    makeAgentDirSync(options.dir, INNER_DIR);
    // Made afresh: what an earlier open left there (one that mounted the whole native dir) is not trusted.
    rmSync(workspaceFolder, { recursive: true, force: true });
    makeAgentDirSync(options.dir, WORKSPACE_DIR);
    const toolsDir = privateDir();
    const pending = this.settings.records?.starting(this.docker.program);
    const runArgs = [
      ...sessionLabels(owner),
      "--label",
      `brain.harness=${this.name}`,
      ...(pending ? ["--label", `${RUN_LABEL}=${pending.run}`] : []),
      ...(network === "none" ? ["--network", "none"] : []),
      ...limitArgs(containerLimits(this.settings.limits)),
    ];
    let box: Container | undefined;
    // Root enters any container's network namespace, so the CLI's credential proxy is bridged in; a network: "bridge"
    // container under another user gets the provider's key itself (README, security).
    const root = uid === 0;
    const bridge = new ContainerBridge(() => box!.pid(options.signal), toolsDir, this.name, root);
    const release = async () => {
      await bridge.close();
      // Removed, not only stopped: a stopped dev container stays behind until someone removes it.
      const warn = (message: string) => options.emit({ type: "harness.warning", data: { message } });
      await (box?.remove(warn) ?? sweepSession(this.docker, owner, this.timeouts.stopMs));
    };
    try {
      // In the try: a path no --mount can carry is refused here, and the tools dir made above is removed with it.
      await writeDevcontainerJson(
        workspaceFolder,
        devcontainerJson({
          sessionId: options.sessionId,
          image: image ?? DEFAULT_DEVCONTAINER_IMAGE,
          workingDir: working_dir ?? innerDir,
          mounts: [innerDir, toolsDir],
          readOnlyMounts: installMounts(this.settings.installDir),
          runArgs,
          harness: this.name,
          ...(remoteUser ? { remoteUser } : {}),
        }),
      );
      const up = await this.cli.up(
        workspaceFolder,
        this.timeouts.upMs,
        {
          ms: lifecycleTimeout !== undefined ? lifecycleTimeout * 1000 : this.timeouts.lifecycleMs,
          setting: `lifecycleTimeout (an agent definition's harness.lifecycleTimeout, in seconds; default ${this.timeouts.lifecycleMs / 1000})`,
          command: (hook, nth) => lifecycleCommand(label, hook, nth),
        },
        options.signal,
      );
      box = new Container(
        this.docker,
        up.containerId,
        image ?? DEFAULT_DEVCONTAINER_IMAGE,
        this.timeouts.stopMs,
        this.settings.records,
      );
      pending?.settled();
      await this.handToRemoteUser(up, innerDir, bridge, options.signal);
      await bridge.reach(hostPorts);
      // Made once the container is known: its launcher execs into it by id.
      const inner = this.settings.inner(
        innerHarness,
        this.launcher(up.containerId, workspaceFolder, up.remoteUser),
      );
      if (!inner) throw unknownInner();
      const harness = await inner.open({
        ...options,
        dir: innerDir,
        // CLI harnesses call their working dir `cwd`; it is mounted at the same path inside.
        config: {
          ...innerConfig,
          options: { ...innerOptions, ...(working_dir ? { cwd: working_dir } : {}) },
        },
        container: bridge.context,
      });
      return new ContainedHarness(harness, release, {
        nativeDir: INNER_DIR,
        steeringOf: {
          supported: inner.supportsSteering,
          ...(inner.steering === "live" || inner.steering === "queued" ? { mode: inner.steering } : {}),
        },
        box,
      });
    } catch (err) {
      // An `up` that failed or was killed may have had a `docker run` the daemon received, which creates the
      // container after release's sweep: Docker lists no create still in flight, so no sweep here is the last.
      // Its run record stays, for the next Brain's start to remove by the run's label whatever it created.
      await release().then(box ? pending?.settled : undefined, () => {});
      throw err;
    }
  }
}
