// The pi-cli harness family: the pi coding agent's own CLI (`pi`, npm @mariozechner/pi-coding-agent) in RPC mode.
// Named pi-cli because `pi` is the runner-protocol reference runner (runners/pi), a different harness.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";

export const PI_CLI: CliFamilyDescriptor = {
  harness: "pi-cli",
  program: "pi",
  npmPackage: "@mariozechner/pi-coding-agent",
  title: "pi",
  steering: "live",
  bound: true,
  // Imported when a session opens: listing or probing the family does not load its adapter.
  open: async (opening) => (await import("./harness.js")).PiHarness.open(opening),
};

export const PiCliFactory = familyFactory(PI_CLI);
