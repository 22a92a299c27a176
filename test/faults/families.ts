// The harness families of the fault matrix, each on a scratch $BRAIN_HOME, with a way to arm each fault:
//   process  the scripted runner (src/testing/fixtures/scripted-runner, `--mode … --once`) on the fake provider
//   api      the api harness on the fake provider (Anthropic's wire)
//   ext      a nui extension host on sdk/ts over stdio (src/testing/fixtures/nui/ts-agent)
//   http     a `remote` HTTP/SSE agent: an inline server that misbehaves as told
// The real CLI families (claude-code, codex, opencode, pi-cli) are left out: each start costs seconds.
import { rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { HarnessFactory } from "../../src/core/harness.js";
import { ApiHarnessFactory } from "../../src/harnesses/api/factory.js";
import { credentialsFor } from "../../src/harnesses/api/testing/provider.js";
import { installExtension } from "../../src/harnesses/ext/install.js";
import { RemoteFactory } from "../../src/harnesses/http/remote.js";
import { ProcessFactory } from "../../src/harnesses/process/factory.js";
import type { SessionConfig } from "../../src/protocol/runner.js";
import { makeBrain, type TestBrain, tempDir } from "../../src/testing/brain.js";
import type { FakeProvider } from "../../src/testing/fake-provider/index.js";
import { catalogFactories, tsAgent, writeExtension } from "../../src/testing/nui.js";
import type { ToolService } from "../../src/tools/tool-service.js";

export const ROOT = join(import.meta.dirname, "../..");
export const SCRIPTED = join(ROOT, "dist/src/testing/fixtures/scripted-runner.js");

export type Family = "process" | "api" | "ext" | "http";
export const FAMILIES: Family[] = ["process", "api", "ext", "http"];

/** The faults a harness's own program can commit. */
export type HarnessFault = "crash mid-turn" | "garbage on stdout" | "oversize frame" | "hang at open";

export interface Bed {
  t: TestBrain;
  home: string;
  harness: string;
  config: SessionConfig;
  /** The prompt that sets the fault off. */
  trigger: string;
  /** Stops everything the bed started, the Brain included, and removes the home. */
  close(): Promise<void>;
}

export interface BedOptions {
  fake: FakeProvider;
  tools?: ToolService[];
}

/** Fast failure for a harness that hangs at open, so a cell does not wait the default 30 s. */
const OPEN_MS = 2_500;

function brainOn(home: string, factories: HarnessFactory[], options: BedOptions, api: string): TestBrain {
  return makeBrain({
    home,
    factories,
    ...(options.tools ? { tools: options.tools } : {}),
    provider: credentialsFor(api, options.fake),
  });
}

/** The scripted runner misbehaving once per session in `mode` ("good" for none). */
export function processBed(mode: string, options: BedOptions, extra: Partial<SessionConfig> = {}): Bed {
  const home = tempDir("brain-faults-");
  const factory = new ProcessFactory({
    name: "scripted",
    command: process.execPath,
    args: [SCRIPTED, "--mode", mode, "--once"],
    timeouts: { openMs: OPEN_MS, interruptGraceMs: 1_000 },
  });
  const t = brainOn(home, [factory], options, "openai");
  return bed(t, home, "scripted", { model: "fake/fake-model", ...extra }, "go");
}

export function apiBed(options: BedOptions, extra: Partial<SessionConfig> = {}): Bed {
  const home = tempDir("brain-faults-");
  const t = brainOn(home, [new ApiHarnessFactory()], options, "anthropic");
  const config = {
    model: "anthropic:fake-model",
    ...extra,
    options: { retries: 0, retry_base_ms: 1, idle_timeout_ms: OPEN_MS, ...(extra.options ?? {}) },
  };
  return bed(t, home, "api", config, "go");
}

/** A TypeScript extension host on stdio; `hang` makes a host that never answers harness.info. */
export async function extBed(options: BedOptions, trigger: string, hang = false): Promise<Bed> {
  const home = tempDir("brain-faults-");
  const src = tempDir("brain-faults-ext-");
  const hostHome = tempDir("brain-faults-hosthome-");
  const command = ["node", tsAgent, hang ? "hang" : "stdio"];
  await installExtension(
    writeExtension(src, "faulty", { transport: "stdio", command }),
    join(home, "extensions"),
  );
  const { factories } = catalogFactories({
    brainHome: home,
    hostHome,
    extensionTimeouts: { openMs: OPEN_MS, interruptGraceMs: 1_000 },
  });
  const t = brainOn(home, factories, options, "anthropic");
  const b = bed(t, home, "ext:faulty/echo", {}, trigger);
  return {
    ...b,
    async close() {
      await b.close();
      rmSync(src, { recursive: true, force: true });
      rmSync(hostHome, { recursive: true, force: true });
    },
  };
}

/** How the inline HTTP agent answers: a fault on the first /run, a good run after it. */
export type HttpScript = (res: ServerResponse, run: number) => void;

export async function httpBed(options: BedOptions, script: HttpScript, hangInfo = false): Promise<Bed> {
  let runs = 0;
  const server = createServer(async (req, res) => {
    for await (const _ of req) {
      // drain the body
    }
    if (req.url === "/info") {
      if (hangInfo) return; // never answers
      return res.end(JSON.stringify({ name: "faulty", version: "1", capabilities: {} }));
    }
    if (req.url === "/run") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      runs += 1;
      return script(res, runs);
    }
    res.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const home = tempDir("brain-faults-");
  const factory = new RemoteFactory("remote", { infoMs: OPEN_MS, interruptGraceMs: 1_000 });
  const t = brainOn(home, [factory], options, "anthropic");
  const b = bed(t, home, "remote", { options: { url } }, "go");
  return {
    ...b,
    async close() {
      server.closeAllConnections();
      server.close();
      await b.close();
    },
  };
}

/** The good run of the inline agent: one text event and done. */
export function goodRun(res: ServerResponse): void {
  res.end('data: {"type":"text","content":"fine"}\n\ndata: {"type":"done"}\n\n');
}

function bed(t: TestBrain, home: string, harness: string, config: SessionConfig, trigger: string): Bed {
  return {
    t,
    home,
    harness,
    config,
    trigger,
    async close() {
      await t.brain.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
