// One pi session: `pi --mode rpc`, started at the first prompt (opening is passive) and again, on the session's
// file, whenever it has gone away. Prompts are `prompt` commands, steering is `steer`, interrupts are `abort`.
// pi never asks before running a tool, so Brain's policy gates its tools up front with `--tools`: a tool the
// policy allows is enabled, one it denies or would ask about is not (pi has no way to ask). In `bound` tool mode
// pi has no tool of its own: Brain's tools come through a bridge extension (./bridge.ts), each call decided by
// the policy at Brain's endpoint, so there `ask` works.
// A steer pi takes after its run's last look at its steering queue is not run: pi keeps it queued, and its next
// prompt (the session's next turn) would run it. So the end of a run waits for pi's answer to each steer written
// during it; a steer still in pi's queue then is dropped with the pi that holds it (a new pi resumes the session
// file), and sent again as a follow-up of the same turn (none when the turn was interrupted or failed).
import { basename, join, relative } from "node:path";
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import { missingHistory, missingKeptHistory } from "../../core/native-check.js";
import type { NativeFile } from "../../protocol/runner.js";
import { endAgentFileLineSync, makeAgentDirSync, writeAgentFileSync } from "../agent-files.js";
import type { CliProcess } from "../cli/child.js";
import type { CliTurnEnd } from "../cli/events.js";
import type { CliOpening } from "../cli/family.js";
import { listNativeFiles } from "../cli/files.js";
import { type CliContext, CliHarness, prepareCli } from "../cli/harness.js";
import { endpointWire, keyWire, vendorKeyEnvironment, type WireApi } from "../cli/provider-api.js";
import { proxyVariable } from "../cli/proxy-variable.js";
import type { CliProvider } from "../cli/services.js";
import { unknownTypeWarning } from "../cli/unknown-types.js";
import { REWRITTEN_MARKER, rewrittenFilesSync } from "../rewritten-files.js";
import { BRIDGE_SOURCE } from "./bridge.js";
import { KEY_VARIABLE, modelsJson, PI_WIRES, PROVIDER, piBaseUrl, vendorModelsJson } from "./models-json.js";
import { PiEventParser, type PiSignal } from "./parser.js";
import { countMessages, readSeen, type Seen, storedMessageEnd, unseenMessages, writeSeen } from "./seen.js";
import { latestSessionFile, rebaseSession } from "./sessions.js";
import { piUpdateHead } from "./updates.js";

/** PI_CODING_AGENT_DIR, relative to the native dir. */
export const AGENT_DIR = "pi";
export const SESSIONS_DIR = "pi/sessions";
/** The session's system prompt, in the agent dir, for `--append-system-prompt`. */
export const SYSTEM_PROMPT_FILE = "append-system-prompt.md";
/** pi's tools enabled by default; `--tools` narrows them to the ones the policy allows. */
export const PI_TOOLS = ["read", "bash", "edit", "write"] as const;

export class PiHarness extends CliHarness<{ child: CliProcess }> {
  private parser = new PiEventParser();
  private nextId = 1;
  /** The steers written to pi in its current run, oldest first, and the ids of those pi has not answered. */
  private steers: string[] = [];
  private readonly unanswered = new Set<string>();
  /** pi's steering queue, as its last `queue_update` said. */
  private piQueue: string[] = [];
  /** The run's end, held until pi has answered every steer of the run. */
  private heldEnd: CliTurnEnd | undefined;
  /** A pi being stopped so that the steers in its queue die with it; the next one starts once it is gone. */
  private retiring: Promise<void> | undefined;
  /** The session file's messages Brain has read, as the record on disk says (./seen.ts). */
  private seen: Seen = { file: null, messages: 0 };

  private constructor(
    ctx: CliContext,
    /** The wire to the provider's endpoint; set when there is one. */
    private readonly wire: WireApi | undefined,
  ) {
    super(ctx);
  }

  static async open(opening: CliOpening): Promise<PiHarness> {
    const wire = endpointWire(opening.family, opening.options, PI_WIRES);
    const ctx = prepareCli(opening);
    makeAgentDirSync(opening.options.dir, SESSIONS_DIR, opening.options.container?.user);
    return new PiHarness(ctx, wire);
  }

  /**
   * The newest session file in the session dir: the one `connect` resumes. pi writes that file only once its
   * session holds an assistant message, so a pi killed before its first answer ended left none, and the failed
   * turn's prompt is not history pi can hold: the turns kept before it must be there.
   */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    const sessionsDir = join(this.options.dir, SESSIONS_DIR);
    const file = latestSessionFile(sessionsDir);
    const what = file ? "the pi session file" : `the pi session file (none in ${SESSIONS_DIR})`;
    return missingKeptHistory(expected, (wanted) =>
      missingHistory(what, this.options.dir, file ? [file] : [], wanted),
    );
  }

  override async steer(text: string, turn: string): Promise<void> {
    this.requireTurn(turn);
    // Still starting (in bound mode the tool endpoint starts first): with no pi to write to, the steer goes out
    // as a follow-up once pi's turn ends, still inside this turn.
    if (!this.connection) return this.queue(text, turn);
    const id = `steer-${this.nextId++}`;
    this.steers.push(text);
    this.unanswered.add(id);
    this.write({ id, type: "steer", message: text });
  }

  protected connect(): { child: CliProcess } | Promise<{ child: CliProcess }> {
    const retiring = this.retiring;
    return retiring ? retiring.then(() => this.connectNow()) : this.connectNow();
  }

  private async connectNow(): Promise<{ child: CliProcess }> {
    // The key's wire: pi then reaches its provider through Brain's credential proxy (../cli/services.ts).
    const { provider } = this.options;
    const wire = keyWire(this.ctx.family, provider, PI_WIRES, this.wire);
    const base = provider.base_url && wire ? piBaseUrl(provider.base_url, wire) : undefined;
    const given = wire ? await this.provider(wire, base) : {};
    if (!this.ctx.bound) return this.start([], {}, given);
    return this.toolEndpoint().then((endpoint) => {
      const bridge = join(endpoint.dir, "pi-bridge.js");
      writeAgentFileSync(endpoint.dir, bridge, BRIDGE_SOURCE, 0o600);
      endpoint.hand(bridge);
      // Bound: no built-in tool, no extension, skill, prompt template or context file but the bridge.
      const args = [
        "--no-builtin-tools",
        "--no-extensions",
        "-e",
        bridge,
        "--no-skills",
        "--no-prompt-templates",
      ];
      return this.start([...args, "--no-context-files"], endpoint.server.env, given);
    });
  }

  protected override isEndpointTool(name: string): boolean {
    return this.options.tools.some((tool) => tool.name === name);
  }

  /** `given`: the provider as pi is to see it. */
  private start(
    boundArgs: string[],
    boundEnv: Record<string, string>,
    given: CliProvider,
  ): { child: CliProcess } {
    const { provider, config } = this.options;
    const { dir } = this.options;
    const { cwd } = this.ctx;
    const agentDir = join(dir, AGENT_DIR);
    const sessionsDir = join(dir, SESSIONS_DIR);
    const args = ["--mode", "rpc", "--offline", "--session-dir", sessionsDir];
    const existing = latestSessionFile(sessionsDir);
    let held = 0;
    if (existing) {
      if (endAgentFileLineSync(dir, existing)) {
        this.warn(
          `session ${relative(dir, existing)} ended in a torn line (pi stopped mid-write); pi skips that line`,
        );
      }
      if (rebaseSession(dir, existing, cwd)) {
        this.warn(`session ${relative(dir, existing)} moved here; its working directory is now ${cwd}`);
      }
      held = countMessages(dir, existing);
      const unseen = unseenMessages(readSeen(dir, AGENT_DIR), existing, held);
      if (unseen > 0) {
        this.warn(
          `session ${relative(dir, existing)} holds ${unseen} message${unseen === 1 ? "" : "s"} Brain's log lacks: ` +
            "pi wrote them after Brain stopped reading it (the host stopped mid-turn); the model sees them as history",
        );
      }
      args.push("--session", existing);
    }
    this.seen = { file: existing ? basename(existing) : null, messages: held };
    writeSeen(dir, AGENT_DIR, this.seen);
    const owner = this.options.container?.user;
    if (this.wire) {
      const models = modelsJson(given.base_url!, config.model!, this.wire);
      writeAgentFileSync(dir, join(agentDir, "models.json"), models, undefined, owner);
      args.push("--provider", PROVIDER, "--model", config.model!);
    } else {
      const wire = keyWire(this.ctx.family, provider, PI_WIRES, undefined);
      if (given.proxy && wire) {
        writeAgentFileSync(
          dir,
          join(agentDir, "models.json"),
          vendorModelsJson(given.proxy, wire),
          undefined,
          owner,
        );
      }
      if (config.model) args.push("--model", config.model);
    }
    // pi reads `--append-system-prompt` as a file whenever a file of that name exists, so the text goes in a
    // file of Brain's: pi gets exactly the client's text, never a host file the client named.
    if (config.system_prompt) {
      const file = join(agentDir, SYSTEM_PROMPT_FILE);
      writeAgentFileSync(dir, file, config.system_prompt, 0o600, this.options.container?.user);
      args.push("--append-system-prompt", file);
    }
    const tools = this.ctx.bound ? undefined : this.allowedTools();
    if (tools) args.push(...(tools.length > 0 ? ["--tools", tools.join(",")] : ["--no-tools"]));
    args.push(...boundArgs);
    args.push(...(this.ctx.session.args ?? []));
    const key: Record<string, string> =
      provider.base_url && given.api_key
        ? { [KEY_VARIABLE]: given.api_key }
        : vendorKeyEnvironment(this.ctx.family, { ...provider, api_key: given.api_key }, PI_WIRES);
    const proxy = proxyVariable(given);
    const env = this.environment({
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      ...key,
      ...proxy,
      ...boundEnv,
    });
    this.parser = new PiEventParser();
    this.steers = [];
    this.unanswered.clear();
    this.piQueue = [];
    this.heldEnd = undefined;
    const read = (line: unknown) => {
      if (storedMessageEnd(line)) this.noteSeen();
      for (const signal of this.parser.handle(line)) this.onSignal(signal);
    };
    const child = this.spawn(args, env, read, undefined, piUpdateHead(read));
    return { child };
  }

  protected send(_connection: unknown, text: string): void {
    this.write({ id: `prompt-${this.nextId++}`, type: "prompt", message: text });
  }

  /**
   * Not waited for: pi answers its abort once its run has stopped, which waits for a pending tool call, and Brain
   * cancels that call once the abort is answered (CliHarness.interrupt): each would wait for the other.
   */
  protected abort(): void {
    this.write({ id: `abort-${this.nextId++}`, type: "abort" });
  }

  protected nativeFiles(): Promise<NativeFile[]> {
    // A session file rebaseSession rewrote no longer starts as earlier checkpoints hold it.
    const rewritten = rewrittenFilesSync(this.options.dir, REWRITTEN_MARKER);
    return listNativeFiles(this.options.dir, SESSIONS_DIR, {
      include: (path) => path.endsWith(".jsonl"),
      appendOnly: (path) => !rewritten.has(path),
    });
  }

  /** The tools Brain's policy lets pi enable, or undefined to leave pi's defaults (no policy to ask). */
  private allowedTools(): string[] | undefined {
    const policy = this.options.policy;
    if (!policy) return undefined;
    const decisions = PI_TOOLS.map((tool) => [tool, policy(tool)] as const);
    const asking = decisions.filter(([, d]) => d === "ask").map(([tool]) => tool);
    if (asking.length > 0) {
      this.warn(
        `pi cannot ask before a tool call, so the tools the policy would ask about are disabled: ${asking.join(", ")}`,
      );
    }
    return decisions.filter(([, d]) => d === "allow").map(([tool]) => tool);
  }

  private onSignal(signal: PiSignal): void {
    switch (signal.kind) {
      case "event":
        return this.emitEvent(signal.event);
      case "response":
        if (signal.id && this.unanswered.delete(signal.id)) this.finishRun();
        if (!signal.success && signal.command === "prompt") {
          const why = signal.error ?? "no reason given";
          this.failTurn(new HarnessError("brain_error", `${this.label}: pi refused the prompt: ${why}`));
        } else if (!signal.success) {
          this.warn(`pi refused "${signal.command}": ${signal.error ?? "no reason given"}`);
        }
        return;
      case "dialog":
        void this.answerDialog(signal);
        return;
      case "send":
        return this.write(signal.command);
      case "queue":
        this.piQueue = signal.steering;
        return;
      case "end":
        this.heldEnd = signal.end;
        return this.finishRun();
      case "unknown":
        return this.warn(unknownTypeWarning("pi", signal.type));
    }
  }

  /** One more message read; pi appends it to its session file right after saying so on stdout. */
  private noteSeen(): void {
    const latest =
      this.seen.file === null ? latestSessionFile(join(this.options.dir, SESSIONS_DIR)) : undefined;
    this.seen = { file: latest ? basename(latest) : this.seen.file, messages: this.seen.messages + 1 };
    try {
      writeSeen(this.options.dir, AGENT_DIR, this.seen);
    } catch {
      // Called for a line of pi's output: a full disk must not break the reading. The count is only advisory.
    }
  }

  /** Ends the run once pi has answered its steers; those still in pi's queue go out again as follow-ups. */
  private finishRun(): void {
    const end = this.heldEnd;
    if (!end || this.unanswered.size > 0) return;
    const stuck = this.piQueue.length > 0 ? this.steers.slice(-this.piQueue.length) : [];
    this.heldEnd = undefined;
    this.steers = [];
    this.piQueue = [];
    if (stuck.length > 0) {
      this.retire();
      const turn = this.turn.current;
      if (turn && end.outcome === "completed") for (const text of stuck) this.queue(text, turn.id);
    }
    this.endTurn(end);
  }

  /** Stops pi without failing the turn: the steers it holds queued die with it, never run in a later prompt. */
  private retire(): void {
    const connection = this.connection;
    if (!connection) return;
    this.forgotten.add(connection.child);
    this.connection = undefined;
    this.retiring = connection.child.stop().finally(() => {
      this.retiring = undefined;
    });
  }

  /** Extension dialogs become Brain questions; no answer (or no turn) cancels the dialog. */
  private async answerDialog(dialog: Extract<PiSignal, { kind: "dialog" }>): Promise<void> {
    const options = dialog.options ? { options: dialog.options } : {};
    const answer = await this.ask({ question: dialog.question, ...options });
    const response =
      answer === ""
        ? { cancelled: true }
        : dialog.method === "confirm"
          ? { confirmed: /^(y|yes|true|allow|ok)$/i.test(answer.trim()) }
          : { value: answer };
    this.write({ type: "extension_ui_response", id: dialog.id, ...response });
  }

  private write(command: unknown): void {
    this.connection?.child.write(`${JSON.stringify(command)}\n`);
  }
}
