// The contract of a harness family: what each family folder exports as its one descriptor, and what the catalog
// is built from. A descriptor is cheap to import: it names the family, its settings and capabilities, and loads
// its harness code (the AI SDK, a CLI's adapter, an extension host's transports) only when a session opens.
import type { z } from "zod";
import type { ClientOptions, HarnessFactory } from "../core/harness.js";
import type { SeedInput } from "../core/seed-messages.js";
import type { BrainConfig } from "../protocol/config.js";
import type { SessionConfig } from "../protocol/runner.js";
import type { Spawner } from "./process/spawner.js";

export type { SeedInput };

/** Where a family's settings sit in brain.config.json. */
export type SettingsBlock =
  /** `cli.<family name>`: an object of the family's own. */
  | "cli"
  /** Fields of the shared `nui` block (the docker program is one setting for docker and devcontainer). */
  | "nui";

export interface FamilySettings {
  block: SettingsBlock;
  /** A strict object schema: unknown fields are refused, naming them. */
  schema: z.ZodObject;
}

export interface FamilyCapabilities {
  /** "per-harness": each configured harness says (a runner's `steering`). */
  steering: "live" | "queued" | "none" | "per-harness";
  /** Takes images with a prompt. */
  images: boolean;
  /** One host process serves many sessions: always, never, or as each harness is configured. */
  sharedHost: "always" | "never" | "per-harness";
  /**
   * Whether its harnesses call a model provider over the network: always, never, or as each harness says
   * (HarnessFactory.needsProvider; a runner's `needs_provider`). Brain cannot tell it from outside, and a container
   * without network must be given a way to the provider (a base_url on this host's loopback, Brain's credential
   * proxy) or the harness fails late, in words that name no cause; one that calls none needs no way at all.
   */
  provider: "always" | "never" | "per-harness";
}

/** What every family is built with: the validated config and where things live. */
export interface FamilyContext {
  config: BrainConfig;
  /** Relative paths in the config resolve against this (the config file's directory). */
  configDir: string;
  /** $BRAIN_HOME. */
  brainHome: string;
  /** The family's own settings, parsed by its schema ({} when the config has none). */
  settings: Record<string, unknown>;
  /** A harness of this catalog with `launcher` in front of its command (devcontainer's inner harness). */
  launched(name: string, launcher: string[]): HarnessFactory | undefined;
  /** The names `launched` knows. */
  launchable(): string[];
  /** Whether the harness `launched` gives for `name` calls a model provider (its family's needsProvider). */
  launchedNeedsProvider(name: string): boolean;
  /**
   * Whether runner harnesses keep a started spare for the next session: worth it in a long-lived host (the
   * daemon, `brain acp`), pure cost in a one-shot `brain run`, which would start a spare only to kill it.
   */
  warmRunners?: boolean;
  /** Options tests pass to families that start host processes (HOME for extension hosts, timeouts). */
  testing?: Record<string, unknown>;
  /**
   * The spawn host the families start their long-lived processes from (runners, CLI agents), one per catalog:
   * a fork of Brain write-protects all of its pages (see Spawner). Factories that use it hold it until closed.
   */
  spawner?: Spawner;
}

/** A field an agent definition's harness block must have for this family, and how to fix its absence. */
export interface AdlNeed {
  field: string;
  fix: string;
}

export interface FamilyDescriptor {
  /** The family's name: the harness name of its single harness, or the name of the kind ("runner", "ext"). */
  name: string;
  /** One line for humans. */
  summary: string;
  settings?: FamilySettings;
  capabilities: FamilyCapabilities;
  /** The harnesses this family offers under this config; cheap: nothing heavy is imported here. */
  factories(ctx: FamilyContext): HarnessFactory[] | { factories: HarnessFactory[]; problems: string[] };
  /** The same harnesses behind a launcher, for families that can run inside another (a dev container). */
  launched?(ctx: FamilyContext, launcher: string[]): HarnessFactory[];
  /**
   * Writes the family's native state from a neutral transcript, in its own format, so the next model request
   * carries the history as the family would have built it (a handoff, `brain sessions rebuild`). Absent: the
   * history goes to the model as a marked summary in the session's first prompt.
   */
  seed?(input: SeedInput): Promise<void>;
  /** The same, per harness name, for a family whose harnesses keep different native formats (the acp presets). */
  seeds?: Readonly<Record<string, (input: SeedInput) => Promise<void>>>;
  /** Agent definitions (ADL) naming this family's harness need these fields in `harness`. */
  adl?: {
    needs?: AdlNeed[];
    /** Harness types this family owns beyond its factories' names (`ext:` refs): a problem, or undefined. */
    claims?(type: string): { ok: true } | { ok: false; message: string } | undefined;
  };
}

/** Whether `factory`, one of `family`'s harnesses, calls a model provider (FamilyCapabilities.provider). */
export function needsProvider(family: FamilyDescriptor, factory: HarnessFactory): boolean {
  const said = family.capabilities.provider;
  return said === "per-harness" ? factory.needsProvider !== false : said === "always";
}

/** The families a host offers, in the order later ones replace earlier harnesses of the same name. */
export type Catalog = readonly FamilyDescriptor[];

type Load = () => Promise<HarnessFactory>;

/**
 * A factory that imports its family's code on first use: the CLI and daemon start without loading every family,
 * and pay for one only when a session of it opens.
 */
export class LazyFactory implements HarnessFactory {
  readonly supportsSteering: boolean;
  readonly steering?: "live" | "queued";
  readonly supportsImages?: boolean;
  readonly clientOptions?: ClientOptions;
  readonly operatorOptions?: HarnessFactory["operatorOptions"];
  private readonly agentSideReason: string | ((nativeDir: string) => Promise<string | undefined>) | undefined;
  private loaded: Promise<HarnessFactory> | undefined;

  constructor(
    readonly name: string,
    capabilities: {
      steering: boolean | "live" | "queued";
      images?: boolean;
      clientOptions?: ClientOptions;
      operatorOptions?: HarnessFactory["operatorOptions"];
      /** HarnessFactory.agentSide, said before the family's code is loaded (or read from the native dir). */
      agentSide?: string | ((nativeDir: string) => Promise<string | undefined>);
    },
    private readonly load: Load,
  ) {
    this.supportsSteering = capabilities.steering !== false;
    if (typeof capabilities.steering === "string") this.steering = capabilities.steering;
    if (capabilities.images) this.supportsImages = true;
    if (capabilities.clientOptions) this.clientOptions = capabilities.clientOptions;
    if (capabilities.operatorOptions) this.operatorOptions = capabilities.operatorOptions;
    this.agentSideReason = capabilities.agentSide;
  }

  agentSide(_config: SessionConfig, nativeDir?: string): string | undefined | Promise<string | undefined> {
    const reason = this.agentSideReason;
    if (typeof reason !== "function") return reason;
    return nativeDir === undefined ? undefined : reason(nativeDir);
  }

  factory(): Promise<HarnessFactory> {
    this.loaded ??= this.load();
    return this.loaded;
  }

  async open(...args: Parameters<HarnessFactory["open"]>) {
    return (await this.factory()).open(...args);
  }

  async close(): Promise<void> {
    if (!this.loaded) return;
    const factory = await this.loaded.catch(() => undefined);
    await (factory as { close?: () => Promise<void> } | undefined)?.close?.();
  }
}
