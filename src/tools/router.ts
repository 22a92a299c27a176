// Binds tools to sessions by name and dispatches calls: only bound tools run, arguments are checked against the
// tool's input schema first, and every failure comes back as an error result, never a thrown error.
import type { Ajv, ValidateFunction } from "ajv";
import { BrainError } from "../core/errors.js";
import { whyStopped } from "../core/running-turn.js";
import type { BoundTools as SessionTools, ToolCatalog } from "../core/tools.js";
import type { ToolCallParams, ToolResult, ToolSchema } from "../protocol/runner.js";
import { UNCHECKED_PATTERNS, withoutPatterns, withoutUniqueItems } from "./schema-patterns.js";
import { type ToolService, textResult } from "./tool-service.js";

interface Entry {
  schema: ToolSchema;
  service: ToolService;
}

export class ToolRouter implements ToolCatalog {
  // Ajv loads with the first tool call: a CLI run or daemon start that calls no tool does not pay for it.
  private ajv: Promise<Ajv> | undefined;
  private readonly validators = new WeakMap<ToolSchema, ValidateFunction>();

  constructor(private readonly services: ToolService[]) {}

  /** Every tool on offer, by name; the first service to offer a name wins. */
  async catalog(): Promise<Map<string, Entry>> {
    const entries = new Map<string, Entry>();
    for (const service of this.services) {
      for (const schema of await service.list()) {
        if (!entries.has(schema.name)) entries.set(schema.name, { schema, service });
      }
    }
    return entries;
  }

  /** The tools a session may call. An unknown name is the caller's error and lists what exists. */
  async bind(names: readonly string[]): Promise<BoundTools> {
    const catalog = await this.catalog();
    const bound = new Map<string, Entry>();
    for (const name of names) {
      const entry = catalog.get(name);
      if (!entry) {
        const known = [...catalog.keys()].sort().join(", ") || "(none)";
        throw new BrainError("bad_request", `unknown tool "${name}" in config.tools; known tools: ${known}`, {
          field: "config.tools",
        });
      }
      bound.set(name, entry);
    }
    return new BoundTools(bound, (schema) => this.validator(schema));
  }

  /** The schema's compiled validator: at once once compiled (every call but the first of each tool). */
  private validator(schema: ToolSchema): ValidateFunction | Error | Promise<ValidateFunction | Error> {
    return this.validators.get(schema) ?? this.compile(schema);
  }

  private async compile(schema: ToolSchema): Promise<ValidateFunction | Error> {
    this.ajv ??= import("ajv").then((m) =>
      withoutUniqueItems(new m.Ajv({ allErrors: true, strict: false, code: { regExp: UNCHECKED_PATTERNS } })),
    );
    const ajv = await this.ajv;
    let fn = this.validators.get(schema);
    if (fn) return fn;
    try {
      // The schema's regex checks are the tool server's to make: on Brain's loop they could block it (ReDoS).
      fn = ajv.compile(withoutPatterns(schema.input_schema) as object);
    } catch (err) {
      return new Error(`tool "${schema.name}" has an invalid input_schema: ${(err as Error).message}`);
    }
    this.validators.set(schema, fn);
    return fn;
  }
}

type Validator = ValidateFunction | Error | Promise<ValidateFunction | Error>;

export class BoundTools implements SessionTools {
  constructor(
    private readonly tools: Map<string, Entry>,
    private readonly validator: (schema: ToolSchema) => Validator,
    private readonly aborts = new AbortWaits(),
  ) {}

  get schemas(): ToolSchema[] {
    return [...this.tools.values()].map((entry) => entry.schema);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** These tools plus every tool of `services` (a session's own, such as its MCP servers); bound names win. */
  async including(services: ToolService[]): Promise<BoundTools> {
    const tools = new Map(this.tools);
    for (const service of services) {
      for (const schema of await service.list())
        if (!tools.has(schema.name)) tools.set(schema.name, { schema, service });
    }
    return new BoundTools(tools, this.validator, this.aborts);
  }

  call(call: ToolCallParams, signal: AbortSignal): Promise<ToolResult> {
    const entry = this.tools.get(call.name);
    if (!entry) {
      const bound = [...this.tools.keys()].join(", ") || "(none)";
      return Promise.resolve(
        textResult(`tool "${call.name}" is not bound to this session; bound tools: ${bound}`, true),
      );
    }
    const found = this.validator(entry.schema);
    if (found instanceof Promise) return found.then((validate) => this.run(entry, validate, call, signal));
    return this.run(entry, found, call, signal);
  }

  private run(
    entry: Entry,
    validate: ValidateFunction | Error,
    call: ToolCallParams,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    if (validate instanceof Error) return Promise.resolve(textResult(validate.message, true));
    if (!validate(call.arguments)) {
      const problems = (validate.errors ?? [])
        .map((e) => `${e.instancePath || "(arguments)"} ${e.message ?? "is invalid"}`)
        .join("; ");
      return Promise.resolve(textResult(`invalid arguments for tool "${call.name}": ${problems}`, true));
    }
    if (signal.aborted) return Promise.resolve(cancelled(call.name, signal));
    // An interrupt answers at once, whether or not the service honours the signal.
    return new Promise<ToolResult>((resolve) => {
      const onAbort = () => resolve(cancelled(call.name, signal));
      const waiting = this.aborts.of(signal);
      waiting.add(onAbort);
      const settle = (result: ToolResult) => {
        waiting.delete(onAbort);
        resolve(result);
      };
      let running: Promise<ToolResult>;
      try {
        running = entry.service.call(call.name, call.arguments, signal);
      } catch (err) {
        running = Promise.reject(err);
      }
      running.then(settle, (err: Error) =>
        settle(textResult(`tool "${call.name}" failed: ${err.message}`, true)),
      );
    });
  }
}

const cancelled = (name: string, signal: AbortSignal) =>
  textResult(`tool "${name}" was cancelled: ${whyStopped(signal)}`, true);

/**
 * The calls waiting on each turn's abort signal. One listener per signal wakes them all: an EventTarget listener
 * added and removed per call (with a Promise.race against the call) cost more than the echo tool itself.
 */
class AbortWaits {
  private readonly bySignal = new WeakMap<AbortSignal, Set<() => void>>();

  of(signal: AbortSignal): Set<() => void> {
    let waiting = this.bySignal.get(signal);
    if (waiting === undefined) {
      const all = new Set<() => void>();
      waiting = all;
      this.bySignal.set(signal, all);
      signal.addEventListener(
        "abort",
        () => {
          for (const wake of all) wake();
          all.clear();
        },
        { once: true },
      );
    }
    return waiting;
  }
}
