// Token usage of a turn's model requests, in Brain's shape; the cost when a price is known (from config) or the
// provider reported it (OpenRouter). Each assistant.message carries what was spent since the one before it, so
// a client summing the messages' usage counts every request once, whatever the turn's steps and steers.
import type { LanguageModelUsage, ProviderMetadata } from "ai";
import type { Usage } from "../../protocol/runner.js";
import type { Price } from "./settings.js";

export class TurnUsage {
  private input = 0;
  private output = 0;
  private cacheRead = 0;
  private cacheWrite = 0;
  private reportedCost = 0;
  private costReported = false;

  constructor(private readonly price: Price | undefined) {}

  /** Adds one request's usage; returns that request's own figures for the conversation file. */
  add(usage: LanguageModelUsage, metadata?: ProviderMetadata): { input: number; output: number } {
    const input = usage.inputTokens ?? 0;
    const output = usage.outputTokens ?? 0;
    this.input += input;
    this.output += output;
    this.cacheRead += usage.inputTokenDetails?.cacheReadTokens ?? 0;
    this.cacheWrite += usage.inputTokenDetails?.cacheWriteTokens ?? 0;
    const cost = (metadata?.openrouter as { usage?: { cost?: unknown } } | undefined)?.usage?.cost;
    if (typeof cost === "number" && Number.isFinite(cost)) {
      this.reportedCost += cost;
      this.costReported = true;
    }
    return { input, output };
  }

  /**
   * What was spent since the last take (undefined when nothing was), and counting starts again. Brain's Usage:
   * input counts every prompt token, cached ones included; cache_* break that down.
   */
  take(): Usage | undefined {
    if (this.input === 0 && this.output === 0 && !this.costReported) return undefined;
    const usage = this.toUsage();
    this.input = this.output = this.cacheRead = this.cacheWrite = this.reportedCost = 0;
    this.costReported = false;
    return usage;
  }

  private toUsage(): Usage {
    const usage: Usage = { input: this.input, output: this.output };
    if (this.cacheRead) usage.cache_read = this.cacheRead;
    if (this.cacheWrite) usage.cache_write = this.cacheWrite;
    const cost = this.cost();
    if (cost !== undefined) usage.cost = cost;
    return usage;
  }

  private cost(): number | undefined {
    const price = this.price;
    if (price) {
      const uncached = Math.max(0, this.input - this.cacheRead - this.cacheWrite);
      const dollars =
        uncached * price.input +
        this.cacheRead * (price.cache_read ?? price.input) +
        this.cacheWrite * (price.cache_write ?? price.input) +
        this.output * price.output;
      return round(dollars / 1_000_000);
    }
    return this.costReported ? round(this.reportedCost) : undefined;
  }
}

/** Dollars to a tenth of a micro-dollar: enough for any per-token price, free of float noise. */
function round(dollars: number): number {
  return Math.round(dollars * 1e7) / 1e7;
}
