import { parse, refuseExtra, str } from "../args.js";
import { runDemo } from "../demo.js";

export const usage = "demo                        an offline tour on the echo runner (no model, no key)";

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args);
  refuseExtra(positionals, 0, "demo takes no arguments");
  return runDemo(str(values.config));
}
