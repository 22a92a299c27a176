// The acp family's harnesses: `acp:claude`, `acp:codex`, `acp:gemini` (the agents Brain knows, installed as
// pinned dev dependencies), and `acp:<name>` for any ACP agent the config names by command line. Each is a CLI
// family factory (its program found with a message that says how to install it); the ACP client is imported
// when a session opens.
import {
  type CliDescription,
  type CliFamilyDescriptor,
  CliFamilyFactory,
  type CliFamilyFactoryOptions,
} from "../cli/family.js";
import { locateCli, manifestVersion } from "../cli/locate.js";
import type { AcpPreset } from "./presets.js";
import type { AcpProfile } from "./profile.js";

export function acpFamilyDescriptor(
  name: string,
  program: string,
  npmPackage: string,
  title: string,
  profile: AcpProfile,
): CliFamilyDescriptor {
  return {
    harness: `acp:${name}`,
    program,
    npmPackage,
    title,
    // ACP has no way to add to a running prompt: a steer waits for the agent's turn to end.
    steering: "queued",
    bound: profile.endpointTool ? true : "Brain knows no way to turn this ACP agent's own tools off",
    // Without a preset's files, the native dir holds only the id of a session the agent keeps where it likes.
    ...(profile.files ? {} : { agentSide: "the ACP agent keeps its sessions outside the native dir" }),
    open: async (opening) => (await import("./harness.js")).AcpHarness.open(opening, profile),
  };
}

export function presetDescriptor(preset: AcpPreset): CliFamilyDescriptor {
  return acpFamilyDescriptor(preset.name, preset.program, preset.npmPackage, preset.title, preset.profile);
}

/**
 * An ACP agent's factory. Its version comes from its npm package's manifest: an ACP agent started with
 * `--version` may well start serving on stdio and wait there.
 */
export class AcpFactory extends CliFamilyFactory {
  constructor(
    private readonly agent: CliFamilyDescriptor,
    private readonly hostOptions: CliFamilyFactoryOptions = {},
  ) {
    super(agent, hostOptions);
  }

  override async describe(): Promise<CliDescription> {
    const out: CliDescription = {
      harness: this.agent.harness,
      program: this.hostOptions.bin ?? this.agent.program,
    };
    const path = locateCli(this.agent.program, { bin: this.hostOptions.bin });
    if (!path) return out;
    out.path = path;
    const version = manifestVersion(path, this.agent.npmPackage);
    if (version) out.version = version;
    return out;
  }
}
