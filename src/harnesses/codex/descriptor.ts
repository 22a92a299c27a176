// The codex family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import { CODEX } from "./factory.js";

export const codexFamily = cliFamily(CODEX, "the OpenAI Codex CLI (codex) through codex app-server");
