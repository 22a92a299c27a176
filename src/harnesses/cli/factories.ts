// The four built-in CLI families, as brain.config.json's `cli` block configures them.
import type { HarnessFactory } from "../../core/harness.js";
import type { CliHarnessSettings, CliSettings } from "../../protocol/config.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";
import { CodexFactory } from "../codex/factory.js";
import { OpencodeFactory } from "../opencode/factory.js";
import { PiCliFactory } from "../pi-cli/factory.js";
import { splitCommandLine } from "../process/command.js";
import type { CliFactoryOptions } from "./options.js";

export function cliFactoryOptions(settings: CliHarnessSettings | undefined): CliFactoryOptions {
  if (!settings) return {};
  const launcher =
    typeof settings.launcher === "string" ? splitCommandLine(settings.launcher) : settings.launcher;
  return {
    ...(settings.bin ? { bin: settings.bin } : {}),
    ...(launcher ? { launcher } : {}),
    ...(settings.env ? { env: settings.env } : {}),
  };
}

export function cliHarnessFactories(settings: CliSettings = {}): HarnessFactory[] {
  return [
    new ClaudeCodeFactory(cliFactoryOptions(settings["claude-code"])),
    new CodexFactory(cliFactoryOptions(settings.codex)),
    new PiCliFactory(cliFactoryOptions(settings["pi-cli"])),
    new OpencodeFactory(cliFactoryOptions(settings.opencode)),
  ];
}
