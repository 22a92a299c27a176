// What the four CLI families share at the factory level: finding their program (with a message that says where
// it looked and how to install it), describing themselves for `brain harnesses`, and one factory class that
// opens a family's harness once its program is found.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import type { Spawner } from "../process/spawner.js";
import { cliVersion, locateCli, manifestVersion, searchPlaces } from "./locate.js";
import type { CliFactoryOptions } from "./options.js";
import { unproxiedReason } from "./proxy-route.js";
import type { VersionCache } from "./version-cache.js";

export interface CliFamily {
  /** The harness name: "claude-code". */
  harness: string;
  /** The program: "claude". */
  program: string;
  /** The npm package that installs it. */
  npmPackage: string;
}

/** How long a CLI may take: `startMs` only for families that wait on a handshake or a health check. */
export interface CliTimeouts {
  startMs: number;
  /** How long an interrupted turn may take to end before the CLI is killed. */
  interruptGraceMs: number;
}

export const DEFAULT_CLI_TIMEOUTS: CliTimeouts = { startMs: 60_000, interruptGraceMs: 10_000 };

/** Everything a family's harness is opened with: its program found, the host's settings, its timeouts. */
export interface CliOpening {
  family: CliFamilyDescriptor;
  options: HarnessOptions;
  /** The program's absolute path. */
  program: string;
  host: CliFactoryOptions;
  timeouts: CliTimeouts;
  /** Where the program is started (see Spawner); none: forked from Brain. */
  spawner?: Spawner;
}

/** One CLI family: its names, what it calls itself in messages, how it steers, and how its harness opens. */
export interface CliFamilyDescriptor extends CliFamily {
  /** The agent's own name in messages: "Claude Code". */
  title: string;
  /** "queued" when a steer waits for the CLI's turn to end (see HarnessFactory.steering). */
  steering: "live" | "queued";
  /**
   * `true` when the family runs in `bound` tool mode (config.tool_mode), or what it lacks to (said in the
   * refusal). Absent: not implemented.
   */
  bound?: true | string;
  /** Defaults over DEFAULT_CLI_TIMEOUTS. */
  timeouts?: Partial<CliTimeouts>;
  /** Set when the agent keeps its conversations outside the native dir: why (HarnessFactory.agentSide). */
  agentSide?: string;
  open(opening: CliOpening): Promise<Harness>;
}

export interface CliFamilyFactoryOptions extends CliFactoryOptions {
  timeouts?: Partial<CliTimeouts>;
  /** Where its programs are started; the factory holds it (Spawner.use) until closed. */
  spawner?: Spawner;
}

/** The factory of every CLI family; a family's factory is this class with its descriptor. */
export class CliFamilyFactory implements HarnessFactory {
  readonly name: string;
  readonly supportsSteering = true;
  readonly steering: "live" | "queued";
  private readonly release: (() => void) | undefined;

  constructor(
    private readonly family: CliFamilyDescriptor,
    private readonly options: CliFamilyFactoryOptions = {},
  ) {
    this.name = family.harness;
    this.steering = family.steering;
    this.release = options.spawner?.use();
  }

  agentSide(): string | undefined {
    return this.family.agentSide;
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const { timeouts, spawner, ...host } = this.options;
    const program = requireCli(this.family, host);
    return this.family.open({
      family: this.family,
      options,
      program,
      host,
      timeouts: { ...DEFAULT_CLI_TIMEOUTS, ...this.family.timeouts, ...timeouts },
      ...(spawner ? { spawner } : {}),
    });
  }

  /** Lets its spawn host go (sessions it opened stop their own programs). */
  async close(): Promise<void> {
    this.release?.();
  }

  describe(cache?: VersionCache): Promise<CliDescription> {
    return describeCli(this.family, this.options, cache);
  }

  /** Why its CLI would talk to the provider itself, not through Brain's credential proxy (./services.ts). */
  unproxied(options: HarnessOptions): string | undefined {
    return unproxiedReason(options, this.options.credentialProxy !== false);
  }
}

/** A family's factory class: `new ClaudeCodeFactory({ launcher })`. */
export function familyFactory(family: CliFamilyDescriptor) {
  return class extends CliFamilyFactory {
    constructor(options: CliFamilyFactoryOptions = {}) {
      super(family, options);
    }
  };
}

export interface CliDescription {
  harness: string;
  program: string;
  /** Absolute path of the program, when found. */
  path?: string;
  version?: string;
}

/** The program's absolute path, or a brain_error naming it, where it was looked for, and how to install it. */
export function requireCli(family: CliFamily, options: CliFactoryOptions): string {
  const found = locateCli(family.program, { bin: options.bin });
  if (found) return found;
  const name = options.bin ?? family.program;
  const where = name.includes("/") ? name : `${searchPlaces(name).slice(0, 3).join(", ")}, and PATH`;
  throw new HarnessError(
    "brain_error",
    `${family.harness}: the "${name}" program was not found (looked at ${where}); ` +
      `install it with "npm install ${family.npmPackage}", or set cli.${family.harness}.bin in brain.config.json`,
  );
}

export async function describeCli(
  family: CliFamily,
  options: CliFactoryOptions,
  cache?: VersionCache,
): Promise<CliDescription> {
  const path = locateCli(family.program, { bin: options.bin });
  const out: CliDescription = { harness: family.harness, program: options.bin ?? family.program };
  if (!path) return out;
  out.path = path;
  // The package's manifest answers at once; only a program from elsewhere is started to ask it.
  const probe = () => cliVersion(path, options.launcher);
  const version =
    manifestVersion(path, family.npmPackage) ?? (await (cache ? cache.version(path, probe) : probe()));
  if (version) out.version = version;
  return out;
}

/** A factory whose program `brain harnesses` can report on. */
export interface DescribableFactory {
  describe(cache?: VersionCache): Promise<CliDescription>;
}

/** A factory whose harnesses may reach their provider through Brain's credential proxy, which says when they will. */
export interface ProxyingFactory {
  unproxied(options: HarnessOptions): string | undefined;
}

export function isProxying(factory: object): factory is ProxyingFactory {
  return typeof (factory as Partial<ProxyingFactory>).unproxied === "function";
}

export function isDescribable(factory: object): factory is DescribableFactory {
  return typeof (factory as Partial<DescribableFactory>).describe === "function";
}
