// The acp family's catalog entry. Its settings are `cli.acp` in brain.config.json: a launcher and variables for
// every ACP agent, other programs for the three presets, and more agents by command line.
import { z } from "zod";
import type { CliFamilyFactoryOptions } from "../cli/family.js";
import type { FamilyDescriptor } from "../family.js";
import { splitCommandLine } from "../process/command.js";
import type { Spawner } from "../process/spawner.js";
import { AcpFactory, acpFamilyDescriptor, presetDescriptor } from "./factory.js";
import { PRESETS } from "./presets.js";

const PRESET_NAMES = ["claude", "codex", "gemini"] as const;
const Words = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const Env = z.record(z.string(), z.string());

/** One ACP agent by command line: `acp:<name>`. */
const AcpAgentEntry = z.strictObject({
  /** The program and its arguments: an array, or a string split on spaces. */
  command: Words,
  /** Variables added to its environment (never provider keys: a preset passes the session's own). */
  env: Env.optional(),
  /** Point it at the session's provider, and checkpoint its files, as this preset does. */
  preset: z.enum(PRESET_NAMES).optional(),
  /** Its name in messages. */
  title: z.string().min(1).optional(),
  /** false: with a preset, it holds the provider's key itself (see AcpSettings.credential_proxy). */
  credential_proxy: z.boolean().optional(),
});
type AcpAgentEntry = z.infer<typeof AcpAgentEntry>;

export const AcpSettings = z.strictObject({
  /** Words run in front of every ACP agent (a sandbox, `nice`, …). */
  launcher: Words.optional(),
  /** Variables added to every ACP agent's environment. */
  env: Env.optional(),
  /** Another program for a preset: `{"codex": "/opt/codex-acp"}`. */
  bin: z.partialRecord(z.enum(PRESET_NAMES), z.string().min(1)).optional(),
  /**
   * false: the presets' agents get the provider's key in their environment, where every command they run can
   * read it, instead of a token of Brain's loopback credential proxy; `{"gemini": false}` for one preset. Only
   * for a launcher that cuts the agent off from 127.0.0.1.
   */
  credential_proxy: z.union([z.boolean(), z.partialRecord(z.enum(PRESET_NAMES), z.boolean())]).optional(),
  /** More agents, by name (harness `acp:<name>`). */
  agents: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, "an ACP agent name is 1 to 32 of a-z, 0-9, '_' or '-'"),
      AcpAgentEntry,
    )
    .optional(),
});
export type AcpSettings = z.infer<typeof AcpSettings>;

const words = (value: string | string[]) => (typeof value === "string" ? splitCommandLine(value) : value);

/** Whether the settings opt a preset (or an agent configured with it) out of the credential proxy. */
function unproxied(settings: AcpSettings, preset: string | undefined, entry?: AcpAgentEntry): boolean {
  const all = settings.credential_proxy;
  if (entry?.credential_proxy !== undefined) return !entry.credential_proxy;
  if (typeof all === "boolean") return !all;
  return preset !== undefined && all?.[preset as (typeof PRESET_NAMES)[number]] === false;
}

function factories(settings: AcpSettings, launcher?: string[], spawner?: Spawner): AcpFactory[] {
  const host: CliFamilyFactoryOptions = {
    ...(launcher ? { launcher } : {}),
    ...(settings.env ? { env: settings.env } : {}),
    ...(spawner ? { spawner } : {}),
  };
  const out = PRESETS.map((preset) => {
    const bin = settings.bin?.[preset.name];
    const direct = unproxied(settings, preset.name) ? { credentialProxy: false } : {};
    return new AcpFactory(presetDescriptor(preset), { ...host, ...direct, ...(bin ? { bin } : {}) });
  });
  for (const [name, entry] of Object.entries(settings.agents ?? {})) {
    const [program, ...args] = words(entry.command);
    const preset = PRESETS.find((p) => p.name === entry.preset);
    const profile = { ...preset?.profile, args: () => args };
    const title = entry.title ?? name;
    const descriptor = acpFamilyDescriptor(name, program!, preset?.npmPackage ?? program!, title, profile);
    const env = { ...settings.env, ...entry.env };
    const direct = unproxied(settings, entry.preset, entry) ? { credentialProxy: false } : {};
    out.push(
      new AcpFactory(descriptor, {
        ...host,
        ...direct,
        bin: program!,
        ...(Object.keys(env).length ? { env } : {}),
      }),
    );
  }
  return out;
}

export const acpFamily: FamilyDescriptor = {
  name: "acp",
  summary:
    "ACP agents (Agent Client Protocol on stdio): claude-agent-acp, codex-acp, gemini --acp, and any by command line",
  settings: { block: "cli", schema: AcpSettings },
  capabilities: { steering: "queued", images: false, sharedHost: "never", provider: "always" },
  factories: (ctx) => {
    const settings = ctx.settings as AcpSettings;
    return factories(settings, settings.launcher ? words(settings.launcher) : undefined, ctx.spawner);
  },
  // Inside a dev container the host's launcher does not apply: the container is the sandbox.
  launched: (ctx, launcher) => factories(ctx.settings as AcpSettings, launcher),
  // The presets, in the files each agent's session/load reads (a handoff, `brain sessions rebuild`). Agents
  // configured by command line keep their sessions where Brain cannot know: they get the history as a summary.
  seeds: {
    "acp:claude": async (input) => (await import("./seed.js")).seedAcpClaude(input),
    "acp:codex": async (input) => (await import("./seed.js")).seedAcpCodex(input),
    "acp:gemini": async (input) => (await import("./seed.js")).seedAcpGemini(input),
  },
};
