// The codex harness family: the OpenAI Codex CLI (`codex`, npm @openai/codex) driven through `codex app-server`.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";

export const CODEX: CliFamilyDescriptor = {
  harness: "codex",
  program: "codex",
  npmPackage: "@openai/codex",
  title: "Codex",
  steering: "live",
  bound: true,
  // Imported when a session opens: listing or probing the family does not load its adapter.
  open: async (opening) => (await import("./harness.js")).CodexHarness.open(opening),
};

export const CodexFactory = familyFactory(CODEX);
