// What every conformance check works on: the runner under test behind a Brain on a throwaway home, the fake
// model provider it is pointed at, and helpers to run turns and watch the log.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Brain } from "../../../core/brain.js";
import type { HarnessFactory } from "../../../core/harness.js";
import { HarnessRegistry } from "../../../core/registry.js";
import type { Session, StartedTurn, TurnOutcome } from "../../../core/session.js";
import { ProcessFactory } from "../../../harnesses/process/factory.js";
import type { SessionEvent } from "../../../protocol/events.js";
import type { ProviderCredentials, SessionConfig } from "../../../protocol/runner.js";
import { FsSessionStore } from "../../../store/fs/index.js";
import type { FakeProvider } from "../../../testing/fake-provider/index.js";
import { BuiltinTools } from "../../../tools/builtin.js";
import { ToolRouter } from "../../../tools/router.js";
import { profileFor, type SubjectProfile } from "./profiles.js";
import { ConformanceTools } from "./tools.js";

export interface KitOptions {
  /** A runner command, or (`harness`) any configured harness. */
  command?: string;
  args?: string[];
  /** A harness of the host's config: its name, and a fresh factory for each Brain (a restart starts anew). */
  harness?: { name: string; factory(): HarnessFactory };
  cwd?: string;
  openTimeoutMs?: number;
  interruptGraceMs?: number;
  /** How long a turn may take before the kit gives up on it. */
  turnTimeoutMs?: number;
}

/** The name a runner command is registered under. */
export const HARNESS = "subject";

export class KitContext {
  readonly home = mkdtempSync(join(tmpdir(), "brain-conformance-"));
  readonly provider: ProviderCredentials;
  readonly profile: SubjectProfile;
  private store!: FsSessionStore;
  brain: Brain;

  constructor(
    readonly options: KitOptions,
    readonly fake: FakeProvider,
    readonly apiKey: string,
  ) {
    this.profile = profileFor(options.harness?.name);
    const api = this.profile.api ? { api: this.profile.api } : {};
    this.provider = { base_url: `${fake.url}${this.profile.path}`, api_key: apiKey, ...api };
    this.brain = this.newBrain();
  }

  /** The harness under test, by its registered name. */
  get harness(): string {
    return this.options.harness?.name ?? HARNESS;
  }

  /** The session config the checks open with: the profile's, and the tools they bind. */
  config(tools: string[]): SessionConfig {
    return { ...this.profile.config, tools };
  }

  /** The store's native dir of a session (the fidelity check tells two sessions' paths apart). */
  nativeDir(id: string): string {
    return this.store.paths(id).native;
  }

  factory(): HarnessFactory {
    if (this.options.harness) return this.options.harness.factory();
    if (!this.options.command) throw new Error("conformance needs a runner command or a harness");
    return new ProcessFactory({
      name: HARNESS,
      command: this.options.command,
      args: this.options.args ?? [],
      cwd: this.options.cwd,
      timeouts: {
        ...(this.options.openTimeoutMs ? { openMs: this.options.openTimeoutMs } : {}),
        ...(this.options.interruptGraceMs ? { interruptGraceMs: this.options.interruptGraceMs } : {}),
      },
    });
  }

  /** A Brain as after a host restart: same home, fresh processes. */
  newBrain(): Brain {
    this.store = new FsSessionStore(this.home);
    return new Brain({
      store: this.store,
      harnesses: new HarnessRegistry([this.factory()]),
      tools: new ToolRouter([new BuiltinTools(), new ConformanceTools()]),
      credentials: () => this.provider,
    });
  }

  async restart(): Promise<void> {
    await this.brain.close();
    this.brain = this.newBrain();
  }

  /** Runs one turn to its end; the events it produced come back with the outcome. */
  async turn(session: Session, text: string): Promise<{ outcome: TurnOutcome; events: SessionEvent[] }> {
    const started = await session.prompt(text);
    const outcome = await this.withTimeout(started.settled, `the turn "${text}" did not settle`);
    const events = (await session.log.read(0)).filter((e) => e.turn === started.turn);
    return { outcome, events };
  }

  /** Waits for an event of a running turn; fails at once if the turn settles first. */
  async waitInTurn(
    session: Session,
    started: StartedTurn,
    match: (e: SessionEvent) => boolean,
    what: string,
  ) {
    let stop = () => {};
    const found = new Promise<SessionEvent>((resolve) => {
      const test = (batch: SessionEvent[]) => {
        const hit = batch.find((e) => e.turn === started.turn && match(e));
        if (hit) {
          stop();
          resolve(hit);
        }
      };
      stop = session.log.subscribe(test);
      void session.log.read(0).then(test);
    });
    const ended = started.settled.then((outcome) => {
      throw new Error(`the turn ended ${failureOf(outcome)} before any ${what}`);
    });
    try {
      return await this.withTimeout(Promise.race([found, ended]), `no ${what}`);
    } finally {
      stop();
    }
  }

  withTimeout<T>(promise: Promise<T>, message: string): Promise<T> {
    const ms = this.options.turnTimeoutMs ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${message} within ${ms / 1000} s`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }
}

export function failureOf(outcome: TurnOutcome): string {
  return outcome.error
    ? `${outcome.status}: ${outcome.error.code}: ${outcome.error.message}`
    : outcome.status;
}

export function textOf(events: SessionEvent[]): string {
  const deltas = events.filter((e) => e.type === "assistant.delta");
  if (deltas.length) return deltas.map((e) => (e.data as { text: string }).text).join("");
  return events
    .filter((e) => e.type === "assistant.message")
    .map((e) => (e.data as { text: string }).text)
    .join("");
}
