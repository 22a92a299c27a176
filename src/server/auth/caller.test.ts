// Who is calling: the role a request asks for is checked, and a bad one is named in the error without being
// repeated in full (a header may be 16 KiB, and the error goes to logs and back to the client).
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors.js";
import { callerOf } from "./caller.js";

const call = (headers: Record<string, string>, query = "") => {
  const url = new URL(`http://127.0.0.1/v1/sessions${query}`);
  return () => callerOf(new Request(url, { headers }), url, undefined);
};

describe("callerOf", () => {
  it("takes observer and controller, and refuses another role naming it", () => {
    expect(call({ "x-brain-role": "observer" })().role).toBe("observer");
    expect(call({}, "?role=controller")().role).toBe("controller");
    expect(call({ "x-brain-role": "king" })).toThrow('role must be "observer" or "controller", not "king"');
  });

  it("cuts a long bad role in its error, as the Origin check does", () => {
    const role = `${"r".repeat(200)}${"s".repeat(16_000)}`;
    for (const fault of [call({ "x-brain-role": role }), call({}, `?role=${role}`)]) {
      const error = (() => {
        try {
          fault();
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ApiError);
      const message = (error as ApiError).message;
      expect(message).toContain(`not "${"r".repeat(200)}…" (16200 characters)`);
      expect(message).not.toContain("ss");
      expect(message.length).toBeLessThan(400);
    }
  });
});
