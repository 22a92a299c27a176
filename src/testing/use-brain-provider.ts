// A Brain and a fake provider a test makes, closed after it: what a describe block calling this keeps them in.
import { afterEach } from "vitest";
import type { Brain } from "../core/brain.js";
import type { FakeProvider } from "./fake-provider/index.js";

/** The Brain and the fake provider the running test made (either may be unset), to be closed after it. */
export class BrainAndProvider {
  brain?: Brain;
  provider?: FakeProvider;

  /** Keeps `brain` to be closed after the test; returns it. */
  keepBrain(brain: Brain): Brain {
    this.brain = brain;
    return brain;
  }

  /** Keeps `provider` to be closed after the test (after its Brain); returns it. */
  keepProvider(provider: FakeProvider): FakeProvider {
    this.provider = provider;
    return provider;
  }
}

/** Registers an afterEach that closes the Brain, then the fake provider, a test kept, and forgets them. */
export function useBrainAndProvider(): BrainAndProvider {
  const made = new BrainAndProvider();
  afterEach(async () => {
    await made.brain?.close();
    await made.provider?.close();
    made.brain = undefined;
    made.provider = undefined;
  });
  return made;
}
