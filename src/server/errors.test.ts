import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CheckpointError } from "../core/checkpoints/index.js";
import { BrainError, SessionError } from "../core/errors.js";
import { AnswerBody, ApiErrorCode } from "../protocol/api.js";
import { LogLockedError, StoreError } from "../store/fs/index.js";
import { ApiError, inField, parseBody, toApiError } from "./errors.js";

describe("core errors as HTTP statuses", () => {
  it("maps by code alone, whatever the message says", () => {
    const cases: [Error, number][] = [
      [new SessionError("not_found", "unknown tool nothing like it"), 404],
      [new SessionError("conflict", "no checkpoint here either"), 409],
      [new LogLockedError("s1", "held", { kind: "process", pid: 1, host: "h" }), 409],
      [new StoreError("bad_request", "bad id"), 400],
      [new StoreError("brain_error", "EIO"), 500],
      [new StoreError("insufficient_storage", "ENOSPC"), 507],
      [new CheckpointError("bad_request", "x"), 400],
      [new BrainError("payload_too_large", "big"), 413],
      [new Error('unknown tool "x"'), 500],
    ];
    for (const [err, status] of cases)
      expect([err.message, toApiError(err).status]).toEqual([err.message, status]);
  });

  it("keeps the field the core named, and adds one only where the core named none", () => {
    const tool = new BrainError("bad_request", "unknown tool", { field: "config.tools" });
    expect(toApiError(tool).body().error).toMatchObject({ code: "bad_request", field: "config.tools" });
    const checkpoint = new CheckpointError("bad_request", "no checkpoint");
    expect(toApiError(inField(checkpoint, "checkpoint")).field).toBe("checkpoint");
    expect(toApiError(inField(tool, "checkpoint")).field).toBe("config.tools");
  });
});

describe("the error codes", () => {
  it("are each in docs/protocol.md's table with the status the daemon answers them with", () => {
    const doc = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");
    const listed = new Map(
      [...doc.matchAll(/^\| (\d{3}) \| `(\w+)` \|/gm)].map(([, status, code]) => [code, Number(status)]),
    );
    const answered = new Map(ApiErrorCode.options.map((code) => [code, new ApiError(code, "").status]));
    expect(listed).toEqual(answered);
  });
});

describe("a body that is one of two shapes (an answer: decision or answer)", () => {
  const refusal = (value: unknown) => {
    try {
      parseBody(AnswerBody, value);
    } catch (err) {
      return (err as ApiError).body().error;
    }
    throw new Error("accepted");
  };

  it("names the field the client sent and got wrong", () => {
    expect(refusal({ decision: "maybe" })).toMatchObject({
      field: "decision",
      message: expect.stringContaining('"allow"|"deny"'),
    });
    expect(refusal({ answer: 5 })).toMatchObject({
      field: "answer",
      message: expect.stringContaining("expected string"),
    });
  });

  it("says which shapes it takes when neither is sent, or both", () => {
    for (const value of [{}, { decision: "allow", answer: "yes" }]) {
      expect(refusal(value).message).toBe(
        'body: send {"decision": "allow"} (or "deny") for a permission request, or {"answer": "..."} for a question, each with an optional "reason"',
      );
    }
  });
});
