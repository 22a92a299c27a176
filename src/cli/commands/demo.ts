import { parse, str } from "../args.js";
import { runDemo } from "../demo.js";

export const usage = "demo                        an offline tour on the echo runner (no model, no key)";

export async function command(args: string[]): Promise<number> {
  return runDemo(str(parse(args).values.config));
}
