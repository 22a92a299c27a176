// A provider's answer of a redirect is not followed. fetch would send the request again to wherever it points,
// with the whole conversation and, across origins, the key in any header but Authorization: Anthropic's
// `x-api-key` and Gemini's `x-goog-api-key` would go to any host a proxy at the base URL (or a host that took
// over its name) names. Nor is a web page taken for an answer: a base URL that is a site's, not its API's
// (`https://openrouter.ai`), or a captive portal, answers 200 with HTML, and the SDKs then reported only a stream that
// ended without a finish reason.

/** A redirect answer fails the request, naming where it pointed and the fix; its body is not read. */
export function withoutRedirects(provider: string, fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, { ...init, redirect: "manual" });
    if (response.ok && /^text\/html\b/i.test(response.headers.get("content-type") ?? "")) {
      await response.body?.cancel().catch(() => {});
      throw new Error(
        `${provider}'s base URL answered HTTP ${response.status} with a web page, not its API's answer: set the provider's base_url to the API's address (a sign-in page of the network's answers so too)`,
      );
    }
    if (response.status < 300 || response.status > 399 || response.status === 304) return response;
    await response.body?.cancel().catch(() => {});
    throw new Error(
      `${provider}'s base URL answered a redirect (HTTP ${response.status}${pointedAt(response)}); Brain does not follow a provider's redirects, since they would take the key and the conversation elsewhere: set the provider's base_url to the address it names`,
    );
  };
}

/** Where the redirect pointed, by its origin alone: its path or query may hold what is not for the log. */
function pointedAt(response: Response): string {
  const location = response.headers.get("location");
  if (!location) return "";
  try {
    return ` to ${new URL(location, response.url || undefined).origin}`;
  } catch {
    return "";
  }
}
