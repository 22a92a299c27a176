// The `api` harness family: sessions whose model loop runs inside Brain on the AI SDK. `config.model` is
// `provider:model`; see providers.ts for the providers and where keys and base URLs come from.
import { type Harness, HarnessError, type HarnessFactory, type HarnessOptions } from "../../core/harness.js";
import { ApiHarness } from "./api-harness.js";
import { ModelConfigError, resolveModel } from "./providers.js";
import { API_CLIENT_OPTIONS, API_OPERATOR_OPTIONS, parseSettings, SettingsError } from "./settings.js";

export interface ApiFactoryOptions {
  /** Registered under this name (default "api"). */
  name?: string;
}

export class ApiHarnessFactory implements HarnessFactory {
  readonly name: string;
  readonly supportsSteering = true;
  readonly supportsImages = true;
  readonly clientOptions = API_CLIENT_OPTIONS;
  readonly operatorOptions = API_OPERATOR_OPTIONS;

  constructor(options: ApiFactoryOptions = {}) {
    this.name = options.name ?? "api";
    // The SDK would print its warnings to the console; this harness reports them as harness.warning events.
    (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
  }

  async open(options: HarnessOptions): Promise<Harness> {
    try {
      const settings = parseSettings(options.config.options);
      // The configured provider's reasoning is the default; the session's own options.reasoning wins.
      if (settings.reasoning === undefined && options.providerReasoning !== undefined)
        settings.reasoning = options.providerReasoning;
      const model = resolveModel(
        options.config.model,
        options.provider,
        options.providerEnv,
        settings.headers,
      );
      return new ApiHarness(options, model, settings);
    } catch (err) {
      if (err instanceof ModelConfigError || err instanceof SettingsError) {
        throw new HarnessError("brain_error", `harness "${this.name}": ${err.message}`);
      }
      throw err;
    }
  }
}
