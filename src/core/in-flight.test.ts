import { describe, expect, it } from "vitest";
import { InFlight } from "./in-flight.js";

describe("InFlight", () => {
  it("is idle at once with nothing under way, and otherwise once the last one ends, also one started meanwhile", async () => {
    const inFlight = new InFlight();
    await inFlight.idle();
    inFlight.start();
    inFlight.start();
    let idle = false;
    const waiting = inFlight.idle().then(() => {
      idle = true;
    });
    inFlight.end();
    await Promise.resolve();
    expect(idle).toBe(false);
    inFlight.end();
    inFlight.start(); // started before the waiter ran: it waits for this one too
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    expect(inFlight.size).toBe(1);
    inFlight.end();
    await waiting;
    expect(idle).toBe(true);
  });
});
