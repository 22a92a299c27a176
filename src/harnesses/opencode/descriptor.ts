// The opencode family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import { OPENCODE } from "./factory.js";

export const opencodeFamily = cliFamily(OPENCODE, "opencode through opencode serve");
