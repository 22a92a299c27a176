// The api family's catalog entry. The AI SDK is imported when the first api session opens, not before.
import { API_PROVIDERS } from "../../protocol/nui/adl.js";
import type { FamilyDescriptor } from "../family.js";
import { LazyFactory } from "../family.js";
import { API_CLIENT_OPTIONS, API_OPERATOR_OPTIONS } from "./settings.js";

export const apiFamily: FamilyDescriptor = {
  name: "api",
  summary: "Brain's own model loop on the AI SDK (config.model is provider:model)",
  capabilities: { steering: "live", images: true, sharedHost: "never", provider: "always" },
  factories: () => [
    new LazyFactory(
      "api",
      // The api options that tune the model loop only (steps, retries, sampling): not the headers or the price.
      {
        steering: true,
        images: true,
        clientOptions: API_CLIENT_OPTIONS,
        operatorOptions: API_OPERATOR_OPTIONS,
      },
      async () => new (await import("./factory.js")).ApiHarnessFactory(),
    ),
  ],
  seed: async (input) => (await import("./seed.js")).seedApi(input),
  adl: { needs: [{ field: "provider", fix: `one of ${API_PROVIDERS.join(", ")}` }] },
};
