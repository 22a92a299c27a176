// The catalog of harness families: one line per family. Everything that lists or checks harnesses is derived
// from a catalog passed in (the config's per-family settings, the registry `brain harnesses` and
// GET /v1/harnesses list, the ADL harness types, the devcontainer's inner harnesses): adding a family is its
// folder plus one line here.
import type { ZodType } from "zod";
import type { HarnessFactory } from "../core/harness.js";
import type { Seeder } from "../core/seed-messages.js";
import { type BrainConfig, brainConfigSchema } from "../protocol/config.js";
import { acpFamily } from "./acp-agent/descriptor.js";
import { apiFamily } from "./api/descriptor.js";
import { claudeCodeFamily } from "./claude-code/descriptor.js";
import { codexFamily } from "./codex/descriptor.js";
import { devcontainerFamily } from "./devcontainer/descriptor.js";
import { extFamily } from "./ext/descriptor.js";
import { type Catalog, type FamilyContext, type FamilyDescriptor, needsProvider } from "./family.js";
import { dockerFamily, remoteFamily } from "./http/descriptor.js";
import { opencodeFamily } from "./opencode/descriptor.js";
import { piCliFamily } from "./pi-cli/descriptor.js";
import { runnerFamily } from "./process/descriptor.js";
import { SpawnRecords, spawnRecordsDir } from "./process/spawn-records.js";
import { Spawner, spawnHostPath } from "./process/spawner.js";

/** Brain's families, in the order a later harness replaces an earlier one of the same name. */
export function builtinCatalog(): Catalog {
  return [
    apiFamily,
    claudeCodeFamily,
    codexFamily,
    piCliFamily,
    opencodeFamily,
    acpFamily,
    runnerFamily,
    remoteFamily,
    dockerFamily,
    devcontainerFamily,
    extFamily,
  ];
}

/** The families that write their native state from a neutral transcript, by harness name. */
export function catalogSeeders(catalog: Catalog): Record<string, Seeder> {
  const out: Record<string, Seeder> = {};
  for (const family of catalog) {
    if (family.seed) out[family.name] = family.seed;
    Object.assign(out, family.seeds);
  }
  return out;
}

/** brain.config.json's schema with every family's settings in it. */
export function catalogConfigSchema(catalog: Catalog) {
  const cli: Record<string, ZodType> = {};
  const nui: Record<string, ZodType> = {};
  for (const family of catalog) {
    if (family.settings?.block === "cli") cli[family.name] = family.settings.schema;
    if (family.settings?.block === "nui") Object.assign(nui, family.settings.schema.shape);
  }
  return brainConfigSchema({ cli, nui });
}

export interface HarnessSetup {
  config: BrainConfig;
  configDir: string;
  brainHome: string;
  /** Passed to every family as FamilyContext.testing. */
  testing?: Record<string, unknown>;
  /** Passed to every family as FamilyContext.warmRunners. */
  warmRunners?: boolean;
}

/** A family's settings from an accepted config: its `cli.<name>` object, or its fields of `nui`. */
function settingsOf(family: FamilyDescriptor, config: BrainConfig): Record<string, unknown> {
  const block = family.settings?.block;
  if (!block) return {};
  const raw = block === "cli" ? config.cli?.[family.name] : config.nui;
  return family.settings!.schema.strip().parse(raw ?? {}) as Record<string, unknown>;
}

/** Every harness the catalog's families offer under this config; broken extensions etc. in `problems`. */
export function catalogHarnesses(
  catalog: Catalog,
  setup: HarnessSetup,
): { factories: HarnessFactory[]; problems: string[] } {
  const contexts = new Map<FamilyDescriptor, FamilyContext>();
  /** The harness of that name behind `launcher`, and its family: the last family offering it, as factories. */
  const launchedOf = (name: string, launcher: string[]) => {
    let found: { factory: HarnessFactory; family: FamilyDescriptor } | undefined;
    for (const family of catalog) {
      if (!family.launched) continue;
      const match = family.launched(contexts.get(family)!, launcher).find((f) => f.name === name);
      if (match) found = { factory: match, family };
    }
    return found;
  };
  const launched = (name: string, launcher: string[]) => launchedOf(name, launcher)?.factory;
  const launchedNeedsProvider = (name: string) => {
    const found = launchedOf(name, ["launcher"]);
    return found ? needsProvider(found.family, found.factory) : true;
  };
  const launchable = () => {
    const names = catalog.flatMap((f) => f.launched?.(contexts.get(f)!, ["launcher"]) ?? []);
    return [...new Set(names.map((f) => f.name))].sort();
  };
  const spawner = new Spawner(spawnHostPath(), new SpawnRecords(spawnRecordsDir(setup.brainHome)));
  for (const family of catalog) {
    contexts.set(family, {
      spawner,
      config: setup.config,
      configDir: setup.configDir,
      brainHome: setup.brainHome,
      settings: settingsOf(family, setup.config),
      launched,
      launchable,
      launchedNeedsProvider,
      ...(setup.testing ? { testing: setup.testing } : {}),
      ...(setup.warmRunners ? { warmRunners: true } : {}),
    });
  }
  const factories: HarnessFactory[] = [];
  const problems: string[] = [];
  for (const family of catalog) {
    const offered = family.factories(contexts.get(family)!);
    if (Array.isArray(offered)) factories.push(...offered);
    else {
      factories.push(...offered.factories);
      problems.push(...offered.problems);
    }
  }
  return { factories, problems };
}

/** A problem with an agent definition's harness block: the field and what is wrong. */
export interface HarnessTypeProblem {
  field: string;
  message: string;
}

/**
 * The ADL `harness.type` values this host runs, from the catalog and the harnesses built from it: checks that a
 * type names one (or is claimed by a family, as `ext:` refs are), and that the fields its family needs are set.
 */
export interface HarnessTypes {
  /** Examples for the message about a missing type. */
  examples: string;
  check(harness: { type: string } & Record<string, unknown>): HarnessTypeProblem[];
}

/** `harnessNames`: every harness this host runs; without it, a type no family claims is not refused here. */
export function catalogHarnessTypes(catalog: Catalog, harnessNames?: readonly string[]): HarnessTypes {
  const families = new Map<string, FamilyDescriptor>();
  for (const family of catalog) {
    if (family.adl?.needs) families.set(family.name, family);
  }
  const claimed = (type: string) => {
    for (const family of catalog) {
      const answer = family.adl?.claims?.(type);
      if (answer) return answer;
    }
    return undefined;
  };
  // Without the host's names, the built-ins under an empty config serve as examples.
  const builtin = () =>
    catalogHarnesses(catalog, { config: {}, configDir: process.cwd(), brainHome: "/nonexistent" }).factories;
  const known = [...new Set(harnessNames ?? builtin().map((f) => f.name))].sort();
  return {
    examples: `${known.filter((n) => !n.startsWith("ext:")).join(", ")} or ext:<extension>/<harness-id>`,
    check(harness) {
      const claim = claimed(harness.type);
      if (claim && !claim.ok) return [{ field: "harness.type", message: claim.message }];
      if (!claim && harnessNames && !known.includes(harness.type)) {
        return [
          {
            field: "harness.type",
            message: `unknown harness type "${harness.type}"; this host runs ${known.join(", ")}`,
          },
        ];
      }
      const family = families.get(harness.type);
      return (family?.adl?.needs ?? [])
        .filter((need) => harness[need.field] === undefined)
        .map((need) => ({
          field: `harness.${need.field}`,
          message: `required for harness.type ${harness.type}; ${need.fix}`,
        }));
    },
  };
}
