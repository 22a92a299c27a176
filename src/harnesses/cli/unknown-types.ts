// Events of a type a CLI harness's parser does not know (a newer CLI's) are skipped, never fatal, and each type is
// said once: a CLI that renamed an event Brain reads (its text deltas, its end of a turn) would otherwise look like
// a turn that went quiet. The types a CLI is known to write that Brain has no use for stay silent.

import { preview } from "../../protocol/ndjson.js";
/** Different unknown types said per parser: a CLI writing a new type on every line must not flood the log. */
export const UNKNOWN_TYPES_SAID = 20;

export class UnknownTypes {
  /** The unknown types said so far. */
  private readonly said = new Set<string>();

  /** `known`: the types the CLI writes that the parser skips on purpose (those it reads need not be listed). */
  constructor(private readonly known: ReadonlySet<string>) {}

  /** The type's name the first time an unknown type is seen (for the first UNKNOWN_TYPES_SAID such types). */
  first(type: unknown): string | undefined {
    const name = typeof type === "string" ? type : JSON.stringify(type ?? null);
    if (this.known.has(name) || this.said.has(name) || this.said.size >= UNKNOWN_TYPES_SAID) return undefined;
    this.said.add(name);
    return name;
  }
}

/** The warning for an unknown type: `what` is "an event" or, say, "a message part". */
export function unknownTypeWarning(program: string, type: string, what = "an event"): string {
  const things = what.replace(/^an? /, "");
  return `${program} wrote ${what} of a type Brain does not know (${JSON.stringify(preview(type, 80))}), skipped; a ${program} newer than Brain knows? Further ${things}s of that type are skipped silently`;
}
