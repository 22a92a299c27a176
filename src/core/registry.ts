import { BrainError } from "./errors.js";
import type { HarnessFactory } from "./harness.js";

/** The harness families this host can run, by name. */
export class HarnessRegistry {
  private readonly factories = new Map<string, HarnessFactory>();

  constructor(factories: Iterable<HarnessFactory> = []) {
    for (const factory of factories) this.add(factory);
  }

  add(factory: HarnessFactory): void {
    this.factories.set(factory.name, factory);
  }

  /** Throws, listing the known names, when `name` is unknown. */
  get(name: string): HarnessFactory {
    const factory = this.factories.get(name);
    if (factory) return factory;
    throw new BrainError(
      "bad_request",
      `unknown harness "${name}"; known harnesses: ${this.names().join(", ") || "(none)"}`,
      { field: "harness" },
    );
  }

  names(): string[] {
    return [...this.factories.keys()].sort();
  }

  async close(): Promise<void> {
    await Promise.allSettled(
      [...this.factories.values()].map((f) => (f as { close?: () => Promise<void> }).close?.()),
    );
  }
}
