// When Brain goes away (stdin ends or breaks), the runner stops what it started and exits: turns are aborted,
// every attachment is released, including one whose open was still running, and nothing waits forever. When
// Brain lets one attachment go (detach), nothing more of it is written.
import { describe, expect, it } from "vitest";
import type { Attachment } from "../../sdk/ts/index.js";
import { OPEN_PARAMS, reply, runSdk } from "./harness.js";

const open = (attachment: string) => ({
  attachment,
  id: `open-${attachment}`,
  method: "open",
  params: OPEN_PARAMS,
});

function gate() {
  let release: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe("runner SDK: when Brain goes away", () => {
  it("releases an attachment whose open was still running when stdin ended", async () => {
    const detached: string[] = [];
    const opening = gate();
    const started = gate();
    const sdk = runSdk({
      open: async (_params, info): Promise<Attachment> => {
        started.release();
        await opening.promise;
        return {
          prompt: async () => {},
          checkpoint: () => [],
          detach: () => {
            detached.push(info.id);
          },
        };
      },
    });
    sdk.send(open("A"));
    await started.promise;
    sdk.end();
    // The open completes only after the host saw the end of its input.
    await new Promise((resolve) => setImmediate(resolve));
    opening.release();
    await sdk.closed;
    expect(sdk.exitCode()).toBe(0);
    expect(detached).toEqual(["A"]);
  });

  it("treats a stdin that fails like one that ended: turns aborted, attachments released, exit", async () => {
    const detached: string[] = [];
    let aborted = false;
    const sdk = runSdk({
      open: (_params, info) => ({
        prompt: (_text, turn) =>
          new Promise<void>((resolve) =>
            turn.signal.addEventListener("abort", () => {
              aborted = true;
              resolve();
            }),
          ),
        checkpoint: () => [],
        detach: () => {
          detached.push(info.id);
        },
      }),
    });
    sdk.send(open("A"));
    await sdk.next(reply("open-A"));
    sdk.send({ attachment: "A", turn: "T1", id: "p1", method: "prompt", params: { text: "hi" } });
    sdk.fail(new Error("EIO: the host went away"));
    await sdk.closed;
    expect(sdk.exitCode()).toBe(1);
    expect(aborted).toBe(true);
    expect(detached).toEqual(["A"]);
    expect(sdk.logs.join("\n")).toMatch(/stdin failed: EIO/);
  });

  it("writes nothing more of a turn once its attachment's detach is answered", async () => {
    const stream = gate();
    const finished = gate();
    let active: boolean | undefined;
    const sdk = runSdk({
      open: () => ({
        async prompt(_text, turn) {
          await stream.promise; // a model stream that has not yet noticed the abort
          active = turn.active;
          turn.delta("late");
          turn.message({ text: "late" });
          await turn.callTool("echo", {}).catch(() => {});
          finished.release();
        },
        checkpoint: () => [],
      }),
    });
    sdk.send(open("A"));
    await sdk.next(reply("open-A"));
    sdk.send({ attachment: "A", turn: "T1", id: "p1", method: "prompt", params: { text: "hi" } });
    sdk.send({ attachment: "A", id: "d1", method: "detach", params: null });
    await sdk.next(reply("d1"));
    const written = sdk.frames.length;
    stream.release();
    await finished.promise;
    expect(active).toBe(false);
    expect(sdk.frames.slice(written)).toEqual([]);
  });
});
