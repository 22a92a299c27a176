// Shared pieces of the nui-family tests: free ports, the seed's Python HTTP harness and the TypeScript test
// agent as processes, the fake docker and devcontainer CLIs, and waiting for a request a session raises.
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { stringify } from "yaml";
import type { Brain } from "../core/brain.js";
import { freePort } from "../core/free-port.js";
import type { HarnessFactory } from "../core/harness.js";
import type { Session } from "../core/session.js";
import { builtinCatalog, catalogHarnesses } from "../harnesses/catalog.js";
import { installExtension } from "../harnesses/ext/install.js";
import type { Timeouts } from "../harnesses/ext/transport.js";
import { echoRunnerPath } from "../harnesses/process/descriptor.js";
import type { BrainConfig } from "../protocol/config.js";
import type { SessionEvent } from "../protocol/events.js";
import type { LogIO } from "../store/fs/index.js";
import { makeBrain, type TestBrain, tempDir, waitForEvent } from "./brain.js";

export const root = join(import.meta.dirname, "../..");
export const fixtures = join(root, "src/testing/fixtures/nui");
export const seedHttpHarness = join(fixtures, "seed_http_echo.py");
export const tsAgent = join(root, "dist/src/testing/fixtures/nui/ts-agent.js");
export const fakeDocker = join(fixtures, "fake-docker.mjs");
export const fakeDevcontainer = join(fixtures, "fake-devcontainer.mjs");
chmodSync(fakeDocker, 0o755);
chmodSync(fakeDevcontainer, 0o755);

/** Polls GET /info until the agent answers (it has just been started). */
export async function untilListening(url: string, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    try {
      const response = await fetch(`${url}/info`);
      if (response.ok) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} never answered GET /info`);
}

export interface Served {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): void;
}

/** The seed's minimal Python HTTP harness on a free port (its PORT variable; see the fixture). */
export async function startSeedHarness(): Promise<Served> {
  const port = await freePort();
  const child = spawn("python3", [seedHttpHarness], {
    env: { ...process.env, PORT: String(port) },
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  await untilListening(url);
  return { url, port, child, stop: () => child.kill("SIGKILL") };
}

/** The TypeScript test agent on Brain's SDK, serving HTTP/SSE on a free port. */
export async function startTsHttpAgent(): Promise<Served> {
  const child = spawn(process.execPath, [tsAgent, "http", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once("exit", (code) => reject(new Error(`ts agent exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, port, child, stop: () => child.kill("SIGKILL") };
}

export function readCalls(stateDir: string, file = "calls.jsonl"): string[][] {
  try {
    return readFileSync(join(stateDir, file), "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);
  } catch {
    return [];
  }
}

/** The first question a session raises (already raised or still to come). */
export function asked(session: Session) {
  return waitForEvent(session, (e) => e.type === "question.requested") as Promise<
    Extract<SessionEvent, { type: "question.requested" }>
  >;
}

export function permissionAsked(session: Session) {
  return waitForEvent(session, (e) => e.type === "permission.requested") as Promise<
    Extract<SessionEvent, { type: "permission.requested" }>
  >;
}

export function warnings(events: SessionEvent[]): string[] {
  return events
    .filter((e) => e.type === "harness.warning")
    .map((e) => (e.data as { message: string }).message);
}

/** Writes a one-harness extension into `dir` (a scratch copy), for transports and commands a test needs. */
export function writeExtension(
  dir: string,
  name: string,
  runtime: Record<string, unknown>,
  harnesses: string[] = ["echo"],
): string {
  const extDir = join(dir, name);
  mkdirSync(extDir, { recursive: true });
  writeFileSync(
    join(extDir, "extension.yaml"),
    stringify({
      apiVersion: "nui.plmbr.dev/extension/v1",
      name,
      version: "1.0.0",
      contributions: { harnesses: { source: { file: "harnesses.yaml" }, runtime } },
    }),
  );
  writeFileSync(join(extDir, "harnesses.yaml"), stringify({ harnesses: harnesses.map((id) => ({ id })) }));
  return extDir;
}

export interface CatalogOptions {
  brainHome: string;
  /** brain.config.json's `nui` block (docker, devcontainer, connections_dir). */
  nui?: Record<string, string>;
  /** The config's `harnesses` (runners) and `cli` blocks. */
  harnesses?: BrainConfig["harnesses"];
  cli?: BrainConfig["cli"];
  configDir?: string;
  /** HOME for extension hosts. */
  hostHome?: string;
  extensionTimeouts?: Partial<Timeouts>;
  /** The config's `containers` block (what each session's container may take of this host). */
  containers?: BrainConfig["containers"];
}

/** Every harness of Brain's catalog under a config made of these blocks. */
export function catalogFactories(options: CatalogOptions): {
  factories: HarnessFactory[];
  problems: string[];
} {
  return catalogHarnesses(builtinCatalog(), {
    config: {
      ...(options.nui ? { nui: options.nui } : {}),
      ...(options.harnesses ? { harnesses: options.harnesses } : {}),
      ...(options.cli ? { cli: options.cli } : {}),
      ...(options.containers ? { containers: options.containers } : {}),
    },
    configDir: options.configDir ?? process.cwd(),
    brainHome: options.brainHome,
    testing: {
      ...(options.hostHome ? { hostHome: options.hostHome } : {}),
      ...(options.extensionTimeouts ? { extensionTimeouts: options.extensionTimeouts } : {}),
      // The dev container's commands see this process's environment as it is when they run: the fakes read
      // their state directory and failure switches from it.
      commandEnv: process.env,
    },
  });
}

/**
 * A test file's scratch: `scratch(prefix)` makes a directory and `brain(options)` the test's Brain, and after each
 * test the Brain is cleaned up (unless `closeBrain()` did it already), then everything in `cleanups`, newest first.
 */
export function useScratch() {
  const cleanups: (() => void | Promise<void>)[] = [];
  let current: TestBrain | undefined;
  const closeBrain = async () => {
    await current?.cleanup();
    current = undefined;
  };
  afterEach(async () => {
    await closeBrain();
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  const scratch = (prefix: string): string => {
    const dir = tempDir(prefix);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  const brain = (options: Parameters<typeof makeBrain>[0]): TestBrain => {
    current = makeBrain(options);
    return current;
  };
  /**
   * A Brain with one installed extension, `name` (harness `ext:<name>/echo`), whose host is `host` in host.py;
   * its logs' file calls are `io`, when given (a disk held or failing), and its hosts' timeouts `timeouts`.
   */
  const pythonHost = async (
    name: string,
    transport: "stdio" | "tcp",
    host: string,
    io?: LogIO,
    timeouts?: Partial<Timeouts>,
  ): Promise<Brain> => {
    const src = writeExtension(scratch("brain-ext-src-"), name, {
      transport,
      command: ["python3", "host.py"],
    });
    writeFileSync(join(src, "host.py"), host);
    const home = scratch("brain-ext-home-");
    await installExtension(src, join(home, "extensions"));
    const { factories } = catalogFactories({
      brainHome: home,
      hostHome: scratch("brain-ext-hosthome-"),
      ...(timeouts ? { extensionTimeouts: timeouts } : {}),
    });
    return brain({ factories, home, ...(io ? { io } : {}) }).brain;
  };
  return { cleanups, closeBrain, scratch, brain, pythonHost };
}

/**
 * useScratch, and a fresh state directory for the fake Docker and Dev Container CLI before each test
 * (FAKE_DOCKER_STATE, unset again after it): `fake.state` is the current test's.
 */
export function useFakeDocker() {
  const scratch = useScratch();
  const fake = { state: "" };
  beforeEach(() => {
    fake.state = scratch.scratch("fake-devcontainer-");
    process.env.FAKE_DOCKER_STATE = fake.state;
    scratch.cleanups.push(() => {
      delete process.env.FAKE_DOCKER_STATE;
    });
  });
  /** The echo runner as a harness to run inside, reporting to this test's fake state; it calls no provider. */
  const echoInside = () => ({
    command: [process.execPath, echoRunnerPath()],
    env: { FAKE_DOCKER_STATE: fake.state },
    needs_provider: false,
  });
  /** The catalog's devcontainer factory on the fake CLIs, with `harnesses` to run inside (default: echo). */
  const devcontainers = (
    home: string,
    harnesses: BrainConfig["harnesses"] = { echo: echoInside() },
    containers?: BrainConfig["containers"],
  ) =>
    catalogFactories({
      brainHome: home,
      ...(containers ? { containers } : {}),
      nui: { devcontainer: fakeDevcontainer, docker: fakeDocker },
      configDir: home,
      harnesses,
    }).factories.filter((f) => f.name === "devcontainer");
  return { ...scratch, fake, echoInside, devcontainers };
}
