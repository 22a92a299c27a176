// Reads through a leader election: a request nobody answered is asked again (as a publish is), anything the
// server answered is not, and a read that stays unanswered fails once the retry budget is spent.
import { NoRespondersError, RequestError, TimeoutError } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import type { NatsContext } from "./context.js";
import { batchHeaders, LogReader } from "./log-read.js";

function reader(answers: (() => unknown)[], publishRetryMs = 5_000) {
  let asked = 0;
  const ctx = {
    stream: "BRAIN",
    subject: (session: string) => `brain.${session}`,
    publishRetryMs,
    reads: {
      streams: {
        getMessage: async () => {
          const answer = answers[Math.min(asked++, answers.length - 1)]!;
          return answer();
        },
      },
    },
  } as unknown as NatsContext;
  return { log: new LogReader(ctx, "s1"), asked: () => asked };
}

const message = { seq: 7, header: batchHeaders(3, 5, "w", "b"), string: () => "[]" };
const timeout = () => {
  throw new TimeoutError();
};

describe("LogReader through a leader election", () => {
  it("asks again while nobody answers, and reads what the new leader has", async () => {
    const noResponders = () => {
      throw new RequestError("no responders", {
        cause: new NoRespondersError("$JS.API.STREAM.MSG.GET.BRAIN"),
      });
    };
    const { log, asked } = reader([timeout, noResponders, () => message]);
    expect(await log.last()).toEqual({ streamSeq: 7, first: 3, last: 5, end: 5 });
    expect(asked()).toBe(3);
  });

  it("does not ask again what the server answered", async () => {
    const { log, asked } = reader([
      () => {
        throw new Error("stream not found");
      },
    ]);
    await expect(log.last()).rejects.toThrow("event log of session s1: read failed: NATS: stream not found");
    expect(asked()).toBe(1);
  });

  it("fails once the retry budget is spent, saying how often it asked", async () => {
    const { log, asked } = reader([timeout], 200);
    await expect(log.last()).rejects.toThrow(/read failed after \d+ tries: NATS: timeout/);
    expect(asked()).toBeGreaterThan(1);
  });
});
