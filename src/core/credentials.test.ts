// What a session's log must never hold of its provider's settings.
import { describe, expect, it } from "vitest";
import type { SessionRecord } from "../protocol/session.js";
import { sessionSecrets } from "./credentials.js";

const record: SessionRecord = {
  id: "s1",
  harness: "api",
  config: {},
  created_at: new Date(0).toISOString(),
  status: "open",
};

describe("sessionSecrets", () => {
  it("counts a key carried in the provider's base URL, as written and as the gateway reads it", () => {
    const values = sessionSecrets(
      record,
      undefined,
      {
        api_key: "sk-provider-key",
        base_url: "https://user:pw%2Fsecret@gateway.example/v1?api_key=q-secret-1",
      },
      {},
    ).map((secret) => secret.value);
    expect(values).toEqual(
      expect.arrayContaining(["sk-provider-key", "pw%2Fsecret", "pw/secret", "q-secret-1"]),
    );
  });

  it("takes nothing from a base URL that holds no credential", () => {
    const values = sessionSecrets(record, undefined, { base_url: "https://gateway.example/v1" }, {});
    expect(values).toEqual([]);
  });
});
