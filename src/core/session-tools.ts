// A session's tools: config.tools plus its own services' (its MCP servers), started the first time a harness or a
// call needs them. A service whose first start failed is tried again before a later turn, and one that said its
// tools changed is listed afresh; when either then offers other tools, the session binds them afresh and its
// harness is reopened, as harnesses take their tools at open.
import type { NewEvent } from "../protocol/events.js";
import type { BoundTools, SessionToolServices, ToolServiceEvent } from "./tools.js";

export interface SessionToolsParts {
  tools: BoundTools;
  services?: SessionToolServices;
  append(events: NewEvent[]): Promise<unknown>;
}

export class SessionTools {
  private bound: Promise<BoundTools> | undefined;

  constructor(private readonly parts: SessionToolsParts) {}

  /** The bound tools, the session's services started the first time. */
  get(): Promise<BoundTools> {
    const { services, tools } = this.parts;
    if (this.bound === undefined && services?.warnings) {
      const warnings = services.warnings();
      if (warnings.length)
        void this.parts
          .append(warnings.map((message) => ({ type: "harness.warning", data: { message } })))
          .catch(() => {});
    }
    this.bound ??= !services
      ? Promise.resolve(tools)
      : services
          .start(this.report, this.boundNames())
          .then((started) => tools.including(started))
          .catch(() => tools);
    return this.bound;
  }

  /**
   * Whether the tools changed (the harness must reopen): a service that never started does now and offers some,
   * or a running one said its tools changed.
   */
  async retry(signal: AbortSignal): Promise<boolean> {
    const { services, tools } = this.parts;
    if (!services?.retry || this.bound === undefined) return false;
    await this.bound;
    const started = await services.retry(this.report, this.boundNames(), signal).catch(() => undefined);
    if (!started) return false;
    this.bound = tools.including(started).catch(() => tools);
    await this.bound;
    return true;
  }

  private boundNames(): string[] {
    return this.parts.tools.schemas.map((schema) => schema.name);
  }

  /** A service's state goes to the log; a failed start is also a warning clients show, naming it and why. */
  private readonly report = (data: ToolServiceEvent): void => {
    const events: NewEvent[] = [{ type: "tool.service", data }];
    if (data.state === "failed")
      events.push({
        type: "harness.warning",
        data: {
          message: `MCP server "${data.service}" did not start: ${data.message ?? "(no reason given)"}`,
        },
      });
    void this.parts.append(events).catch(() => {});
  };
}
