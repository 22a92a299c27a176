// The pi-cli family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import { PI_CLI } from "./factory.js";

export const piCliFamily = cliFamily(PI_CLI, "the pi coding agent's CLI (pi) in RPC mode");
