// A Brain on a throwaway $BRAIN_HOME, wired as the CLI wires it, with extra harnesses and tools for tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { echoRunnerPath } from "../cli/setup.js";
import { Brain, type BrainOptions } from "../core/brain.js";
import type { Harness, HarnessFactory, HarnessOptions } from "../core/harness.js";
import { HarnessRegistry } from "../core/registry.js";
import type { Session } from "../core/session.js";
import { builtinCatalog, catalogSeeders } from "../harnesses/catalog.js";
import { ProcessFactory } from "../harnesses/process/factory.js";
import type { SessionEvent } from "../protocol/events.js";
import type { ProviderCredentials } from "../protocol/runner.js";
import { FsSessionStore, type LogIO } from "../store/fs/index.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import type { ToolService } from "../tools/tool-service.js";

export interface TestBrain {
  brain: Brain;
  home: string;
  store: FsSessionStore;
  /** Closes the brain and removes the home dir. */
  cleanup(): Promise<void>;
}

export function tempDir(prefix = "brain-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function echoFactory(
  extra: Partial<ConstructorParameters<typeof ProcessFactory>[0]> = {},
): ProcessFactory {
  return new ProcessFactory({ name: "echo", command: process.execPath, args: [echoRunnerPath()], ...extra });
}

export function makeBrain(
  options: {
    factories?: HarnessFactory[];
    tools?: ToolService[];
    home?: string;
    provider?: ProviderCredentials;
    /** The session tool services (MCP servers) of sessions that name some. */
    sessionTools?: BrainOptions["sessionTools"];
    /** Configured providers, their keys read from `env` (instead of a fixed `provider`). */
    providers?: BrainOptions["providers"];
    env?: BrainOptions["env"];
    providerEnv?: BrainOptions["providerEnv"];
    /** The families' seeders, when not the built-in ones (a seeding that fails). */
    seeders?: BrainOptions["seeders"];
    openSessionsPerTenant?: number;
    /** The logs' file calls, when not the real ones (a disk held or failing). */
    io?: LogIO;
  } = {},
): TestBrain {
  const home = options.home ?? tempDir();
  const store = new FsSessionStore(home, options.io);
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry(options.factories ?? [echoFactory()]),
    // The built-in families' seeders (handoff, rebuild), as a real host has them.
    seeders: options.seeders ?? catalogSeeders(builtinCatalog()),
    tools: new ToolRouter([new BuiltinTools(), ...(options.tools ?? [])]),
    ...(options.provider ? { credentials: () => options.provider! } : {}),
    ...(options.sessionTools ? { sessionTools: options.sessionTools } : {}),
    ...(options.providers ? { providers: options.providers } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.providerEnv ? { providerEnv: options.providerEnv } : {}),
    ...(options.openSessionsPerTenant ? { openSessionsPerTenant: options.openSessionsPerTenant } : {}),
  });
  return {
    brain,
    home,
    store,
    async cleanup() {
      await brain.close();
      // A CLI's own children may still be finishing a write as the session closes: retry a dir that refills.
      if (!options.home) rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** Every durable event of a session, from the log. */
export async function events(session: Session): Promise<SessionEvent[]> {
  return session.log.read(0);
}

/** Resolves with the first durable event that matches, including ones already in the log. */
export async function waitForEvent(
  session: Session,
  match: (event: SessionEvent) => boolean,
): Promise<SessionEvent> {
  return new Promise((resolve) => {
    const unsubscribe = session.log.subscribe((batch) => {
      const hit = batch.find(match);
      if (hit) {
        unsubscribe();
        resolve(hit);
      }
    });
    void session.log.read(0).then((all) => {
      const hit = all.find(match);
      if (hit) {
        unsubscribe();
        resolve(hit);
      }
    });
  });
}

export function textOf(all: SessionEvent[], turn?: string): string {
  return all
    .filter((e) => e.type === "assistant.delta" && (turn === undefined || e.turn === turn))
    .map((e) => (e.data as { text: string }).text)
    .join("");
}

/**
 * Waits for the session's next permission request, answers it with `decision`, and checks a second answer is
 * refused (each request takes exactly one answer). Returns the request's data.
 */
export async function answerPermissionOnce(
  session: Session,
  decision: "allow" | "deny",
  reason?: string,
): Promise<Record<string, unknown>> {
  const request = await waitForEvent(session, (e) => e.type === "permission.requested");
  const id = (request.data as { id: string }).id;
  await session.answer({
    type: "permission.resolved",
    data: { id, decision, ...(reason ? { reason } : {}) },
  });
  const again = decision === "allow" ? "deny" : "allow";
  const second = await session.answer({ type: "permission.resolved", data: { id, decision: again } }).then(
    () => undefined,
    (err: Error) => err,
  );
  if (!second || !/answered already/.test(second.message))
    throw new Error(`a second answer to permission request ${id} was not refused as answered already`);
  return request.data as Record<string, unknown>;
}

/** A harness factory ("scripted") whose every turn runs `script` with the session's options and the turn id. */
export function scripted(script: (options: HarnessOptions, turn: string) => Promise<void>): HarnessFactory {
  return {
    name: "scripted",
    supportsSteering: false,
    async open(options): Promise<Harness> {
      return {
        async prompt(_text, ctx) {
          await script(options, ctx.turn);
          return { interrupted: false };
        },
        steer: async () => {},
        interrupt: async () => {},
        checkpoint: async () => [],
        close: async () => {},
      };
    },
  };
}

/**
 * A harness factory named `name` whose harness answers every prompt at once and does nothing else, but for what
 * `parts` replaces: a stand-in for a test about one of its methods.
 */
export function standIn(name: string, parts: Partial<Harness>): HarnessFactory {
  return { name, supportsSteering: false, open: async () => quietHarness(parts) };
}

/** A harness that answers every prompt at once and does nothing else, but for what `parts` replaces. */
export function quietHarness(parts: Partial<Harness> = {}): Harness {
  return {
    prompt: async () => ({ interrupted: false }),
    steer: async () => {},
    interrupt: async () => {},
    checkpoint: async () => [],
    close: async () => {},
    ...parts,
  };
}

/** A tool service of one tool, "gated", whose calls all wait until `open()` is called, then answer "done". */
export function gatedTool(): { tools: ToolService; open: () => void } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const tools: ToolService = {
    list: async () => [{ name: "gated", input_schema: { type: "object" } }],
    call: async () => {
      await opened;
      return { content: [{ type: "text", text: "done" }], is_error: false };
    },
  };
  return { tools, open };
}
