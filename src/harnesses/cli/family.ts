// What the four CLI families share at the factory level: finding their program (with a message that says where
// it looked and how to install it), and describing themselves for `brain harnesses`.
import { HarnessError } from "../../core/harness.js";
import { cliVersion, locateCli, searchPlaces } from "./locate.js";
import type { CliFactoryOptions } from "./options.js";

export interface CliFamily {
  /** The harness name: "claude-code". */
  harness: string;
  /** The program: "claude". */
  program: string;
  /** The npm package that installs it. */
  npmPackage: string;
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

export async function describeCli(family: CliFamily, options: CliFactoryOptions): Promise<CliDescription> {
  const path = locateCli(family.program, { bin: options.bin });
  const out: CliDescription = { harness: family.harness, program: options.bin ?? family.program };
  if (!path) return out;
  out.path = path;
  const version = await cliVersion(path, options.launcher);
  if (version) out.version = version;
  return out;
}

/** A factory whose program `brain harnesses` can report on. */
export interface DescribableFactory {
  describe(): Promise<CliDescription>;
}

export function isDescribable(factory: object): factory is DescribableFactory {
  return typeof (factory as Partial<DescribableFactory>).describe === "function";
}
