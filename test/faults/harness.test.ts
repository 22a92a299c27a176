// The fault matrix, harness side: the same four faults of a harness's own program against every family where
// the fault applies. A family without a cell for a fault (the api harness has no stdout) shows "n/a" in
// `npm run faults`. Each cell: the turn settles as it should, the session goes on, nothing acknowledged is lost,
// no turn is left open, no configured secret is written.
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { startKeyedProvider } from "../../src/harnesses/api/testing/provider.js";
import type { FakeProvider } from "../../src/testing/fake-provider/index.js";
import { runCell } from "./cell.js";
import { apiBed, type Bed, extBed, goodRun, httpBed, processBed } from "./families.js";

let fake: FakeProvider;
let bed: Bed | undefined;
beforeAll(async () => {
  fake = await startKeyedProvider();
});
afterEach(async () => {
  await bed?.close();
  bed = undefined;
  fake.reset();
});
afterAll(() => fake.close());

const use = <T extends Bed>(b: T): T => {
  bed = b;
  return b;
};

describe("crash mid-turn", () => {
  it("process", async (cell) => {
    await runCell(cell, use(processBed("exit-mid-turn", { fake })), {
      status: "failed",
      code: "brain_error",
      message: /exited with code 3.*exiting mid-turn/s,
      recovers: true,
      nextText: /echo: again/,
    });
  });

  it("api", async (cell) => {
    fake.script([{ text: "x".repeat(60), chunkSize: 2, delayMs: 5, breakAfter: 12 }]);
    await runCell(cell, use(apiBed({ fake })), {
      status: "failed",
      code: "provider_error",
      message: /^the stream of anthropic model "fake-model" broke off: /,
      recovers: true,
      nextText: /again/,
    });
  });

  it("ext", async (cell) => {
    await runCell(cell, use(await extBed({ fake }, "crash")), {
      status: "failed",
      code: "brain_error",
      message: /exited with code 5.*crashing on purpose/s,
      recovers: true,
      nextText: /ts says: again/,
    });
  });

  it("http", async (cell) => {
    const b = await httpBed({ fake }, (res, run) => {
      if (run > 1) return goodRun(res);
      res.write('data: {"type":"text","content":"partial"}\n\n', () => res.destroy());
    });
    await runCell(cell, use(b), {
      status: "failed",
      code: "brain_error",
      recovers: true,
      nextText: /^fine$/,
    });
  });
});

describe("garbage on stdout", () => {
  it("process", async (cell) => {
    await runCell(cell, use(processBed("garbage", { fake })), {
      status: "failed",
      code: "brain_error",
      message: /not JSON/,
      recovers: true,
    });
  });

  // A nui host is third-party code: a line that is no JSON-RPC is a warning, and the run goes on.
  it("ext", async (cell) => {
    await runCell(cell, use(await extBed({ fake }, "garbage")), {
      status: "completed",
      warning: /not JSON-RPC/,
      recovers: true,
    });
  });

  it("http", async (cell) => {
    const b = await httpBed({ fake }, (res, run) => {
      if (run > 1) return goodRun(res);
      res.end(
        'this is no SSE field\n\ndata: not json\n\ndata: {"type":"text","content":"ok"}\n\ndata: {"type":"done"}\n\n',
      );
    });
    await runCell(cell, use(b), {
      status: "completed",
      warning: /SSE data that is not JSON/,
      recovers: true,
    });
  });
});

describe("oversize frame", () => {
  it("process", async (cell) => {
    await runCell(cell, use(processBed("oversize", { fake })), {
      status: "failed",
      code: "brain_error",
      message: /capped at 4 MiB/,
      recovers: true,
    });
  });

  it("ext", async (cell) => {
    await runCell(cell, use(await extBed({ fake }, "oversize")), {
      status: "failed",
      code: "brain_error",
      message: /4 MiB/,
      recovers: true,
    });
  });

  // An SSE event of 5 MiB: HTTP agents have no frame cap of their own; the text must arrive whole.
  it("http", async (cell) => {
    const big = "x".repeat(5 << 20);
    const b = await httpBed({ fake }, (res, run) => {
      if (run > 1) return goodRun(res);
      res.end(`data: {"type":"text","content":"${big}"}\n\ndata: {"type":"done"}\n\n`);
    });
    await runCell(cell, use(b), { status: "completed", recovers: true });
  });
});

describe("hang at open", () => {
  it("process", async (cell) => {
    await runCell(cell, use(processBed("hang-open", { fake })), {
      status: "failed",
      code: "brain_error",
      message: /did not answer "open"/,
      recovers: true,
    });
  });

  // The api harness opens without a call; its first request is what can hang.
  it("api", async (cell) => {
    fake.script([{ hang: true }]);
    await runCell(cell, use(apiBed({ fake })), {
      status: "failed",
      code: "provider_error",
      message: /^anthropic model "fake-model" went quiet: /,
      recovers: true,
    });
  });

  it("ext", async (cell) => {
    await runCell(cell, use(await extBed({ fake }, "go", true)), {
      status: "failed",
      code: "brain_error",
      message: /2\.5 s|harness\.info/,
      recovers: false,
    });
  });

  it("http", async (cell) => {
    await runCell(cell, use(await httpBed({ fake }, goodRun, true)), {
      status: "failed",
      code: "brain_error",
      message: /GET .*\/info failed/,
      recovers: false,
    });
  });
});
