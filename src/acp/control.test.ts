// brain acp tells the daemon's "another client controls the session" refusal by its structured reason (the REST
// error body's `reason: "controlled"` and `controller`), not by its wording: a daemon that words it otherwise (a
// later version, a translation) is still read as that refusal, and another 409 is not.
import { RequestError } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { errorOf } from "../client/errors.js";
import { controlRefusal, isControlRefusal } from "./control.js";

const body = (error: Record<string, unknown>) => JSON.stringify({ error });

describe("controlRefusal", () => {
  it("reads a 409 with reason controlled as the refusal, whatever its message says", () => {
    const refused = errorOf(
      409,
      body({
        code: "conflict",
        message: "session s1 is driven by tab-a at the moment: take control first",
        reason: "controlled",
        controller: "tab-a",
      }),
    );
    const acp = controlRefusal(refused, "s1", "prompt");
    expect(acp).toBeInstanceOf(RequestError);
    expect(isControlRefusal(acp)).toBe(true);
    expect(acp?.data).toMatchObject({ reason: "controlled", controller: "tab-a" });
    expect((acp?.data as { message?: string } | undefined)?.message).toContain(
      'another client ("tab-a") is driving session s1',
    );
  });

  it("leaves any other 409 alone", () => {
    const running = errorOf(409, body({ code: "conflict", message: "session s1: a turn is running" }));
    expect(controlRefusal(running, "s1", "cancel")).toBeUndefined();
  });
});
