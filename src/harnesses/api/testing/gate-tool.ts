// A tool for tests that waits until the test opens it (or the call is aborted): it holds a turn in a tool call
// for as long as a test needs, without timers.
import type { ToolService } from "../../../core/tools.js";
import type { ToolResult, ToolSchema } from "../../../protocol/runner.js";

export class GateTool implements ToolService {
  private release: (() => void) | undefined;
  /** Opened before the call reached the tool (tool.call is logged before the tool runs): answer at once. */
  private opened = false;
  async list(): Promise<ToolSchema[]> {
    return [{ name: "gate", description: "waits", input_schema: { type: "object" } }];
  }
  call(_name: string, _args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    return new Promise((resolve) => {
      this.release = () => resolve({ content: [{ type: "text", text: "opened" }], is_error: false });
      if (this.opened) {
        this.opened = false;
        this.release();
      }
      signal.addEventListener("abort", () =>
        resolve({ content: [{ type: "text", text: "aborted" }], is_error: true }),
      );
    });
  }
  open(): void {
    if (this.release) this.release();
    else this.opened = true;
    this.release = undefined;
  }
}
