// How an unknown provider name is answered: with the configured ones, or with where providers come from.
import { describe, expect, it } from "vitest";
import { Providers } from "./providers.js";

describe("Providers.settings", () => {
  it("answers an unknown name with the configured ones", () => {
    const providers = new Providers({ providers: { local: { base_url: "http://127.0.0.1:1/v1" } } });
    expect(() => providers.settings("other")).toThrow('unknown provider "other" (configured: local)');
  });

  it("says where providers are configured when none are: a session made under a config, used without it", () => {
    expect(() => new Providers({}).settings("local")).toThrow(
      /unknown provider "local" \(no providers are configured: .*brain\.config\.json.*--config FILE\)/,
    );
  });
});
