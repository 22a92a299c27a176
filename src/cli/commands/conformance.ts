export { conformanceCommand as command } from "../../conformance/command.js";

export const usage = `conformance [--json] [--open-timeout S] [--interrupt-grace S] -- CMD ARGS...
                              check a runner against the runner protocol and the four verification checks`;
