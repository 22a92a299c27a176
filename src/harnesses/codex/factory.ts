// The codex harness family: the OpenAI Codex CLI (`codex`, npm @openai/codex) driven through `codex app-server`.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";
import { CodexHarness } from "./harness.js";

export const CODEX: CliFamilyDescriptor = {
  harness: "codex",
  program: "codex",
  npmPackage: "@openai/codex",
  title: "Codex",
  steering: "live",
  open: (opening) => CodexHarness.open(opening),
};

export const CodexFactory = familyFactory(CODEX);
