// The pi-cli harness family: the pi coding agent's own CLI (`pi`, npm @mariozechner/pi-coding-agent) in RPC mode.
// Named pi-cli because `pi` is the runner-protocol reference runner (runners/pi), a different harness.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";
import { PiHarness } from "./harness.js";

export const PI_CLI: CliFamilyDescriptor = {
  harness: "pi-cli",
  program: "pi",
  npmPackage: "@mariozechner/pi-coding-agent",
  title: "pi",
  steering: "live",
  open: (opening) => PiHarness.open(opening),
};

export const PiCliFactory = familyFactory(PI_CLI);
