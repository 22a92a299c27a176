// A provider answers a wrong or revoked key with an error that shows the key masked: OpenAI's 401 "Incorrect API key
// provided: sk-proj-****…wxyz" (the key's first 8 characters, a `*` for each hidden one, its last 4); dashboards and
// gateways write "sk-proj-abc...wxyz" or "sk-...wxyz". (Anthropic's 401 says only "invalid x-api-key", Google's
// "API key not valid": neither shows the key.) Through the credential proxy the key is the operator's real one,
// which the agent, given a stand-in token, must not learn anything of: its ends tell which of the operator's keys
// it is, and on a key whose vendor prefix is short (a legacy "sk-" key) 5 of the first 8 are the secret's own.
// So the proxy (./proxy-redact.ts) replaces such an echo as it replaces the key. It is found by the real key's own
// ends, never by a pattern: the key's first 3 or more characters, then a run of mask characters, then the key's
// last 4 or more. A masked key with other ends (another key's) is left alone, as is text without a mask between.
// Not found: an echo of the last characters alone ("****wxyz"), which no prefix ties to this key.
import { MIN_SECRET_LENGTH, type Redactor } from "../../core/redact.js";

/** Fewest of the key's first characters an echo shows: a vendor prefix ("sk-") at least. */
const MIN_SHOWN_START = 3;
/** Fewest of the key's last characters an echo shows: OpenAI's four. */
const MIN_SHOWN_END = 4;
/**
 * What hides the key's middle, longest first: `*`, `.`, and `…` as it is, as its UTF-8 bytes read one a character
 * (the proxy reads a body as latin1, ./proxy-redact.ts) and JSON-escaped.
 */
const MASKS = ["\\u2026", "\u00e2\u0080\u00a6", "\u2026", "*", "."];
/** How many characters of mask, at most, a stream holds back per character of the key: a `\u2026` each. */
const MASK_PER_KEY_CHARACTER = 6;

/** What an answer's text goes through on its way to the agent (./proxy-redact.ts). */
export interface AnswerRedactor {
  redact(text: string): string;
  /** How many characters at the end of `text` a stream holds back, in case the next chunk completes a secret. */
  pendingTail(text: string): number;
}

/** The key's masked echoes, replaced with `[redacted:NAME]` as the key itself is (../../core/redact.ts). */
export class MaskedEcho implements AnswerRedactor {
  /** Every character that can be in an echo: the key's and the masks'. */
  private readonly units = new Set<number>();
  /** The most characters an echo a stream holds back can have. */
  private readonly longest: number;

  constructor(
    private readonly name: string,
    private readonly key: string,
  ) {
    for (const text of [key, ...MASKS]) {
      for (let i = 0; i < text.length; i++) this.units.add(text.charCodeAt(i));
    }
    this.longest = key.length * (2 + MASK_PER_KEY_CHARACTER);
  }

  redact(text: string): string {
    const key = this.key;
    if (key.length < MIN_SECRET_LENGTH) return text;
    const start = key.slice(0, MIN_SHOWN_START);
    let out = "";
    let from = 0;
    for (let at = text.indexOf(start); at >= 0; at = text.indexOf(start, at + 1)) {
      const end = this.echoEnd(text, at);
      if (end === undefined) continue;
      out += `${text.slice(from, at)}[redacted:${this.name}]`;
      from = end;
      at = end - 1;
    }
    return from === 0 ? text : out + text.slice(from);
  }

  /**
   * As Redactor.pendingTail, and for the same reason never by comparing the text with the key: the trailing run of
   * characters an echo can hold (the key's and the masks'), up to an echo's length. An echo's start is inside it.
   */
  pendingTail(text: string): number {
    if (this.key.length < MIN_SECRET_LENGTH) return 0;
    const most = Math.min(text.length, this.longest - 1);
    let held = 0;
    while (held < most && this.units.has(text.charCodeAt(text.length - 1 - held))) held++;
    return held;
  }

  /** Where a masked echo of the key that starts at `at` ends; undefined when none starts there. */
  private echoEnd(text: string, at: number): number | undefined {
    const key = this.key;
    let shown = MIN_SHOWN_START;
    while (shown < key.length - MIN_SHOWN_END && text[at + shown] === key[shown]) shown++;
    // The most of the key's start first, then less: a key that holds a mask character (a `.`) may be shown up to it.
    for (; shown >= MIN_SHOWN_START; shown--) {
      const masked = maskLength(text, at + shown);
      if (masked === 0) continue;
      const after = at + shown + masked;
      for (let end = key.length - shown; end >= MIN_SHOWN_END; end--) {
        if (text.startsWith(key.slice(key.length - end), after)) return after + end;
      }
    }
    return undefined;
  }
}

/** How many characters of mask `text` has from `at`. */
function maskLength(text: string, at: number): number {
  let i = at;
  for (;;) {
    const mask = MASKS.find((one) => text.startsWith(one, i));
    if (mask === undefined) return i - at;
    i += mask.length;
  }
}

/** `redactor`'s secrets and the masked echoes of `key`, replaced; a stream holds back what either would. */
export function withMaskedEcho(redactor: Redactor, name: string, key: string): AnswerRedactor {
  const echo = new MaskedEcho(name, key);
  return {
    redact: (text) => echo.redact(redactor.redact(text)),
    pendingTail: (text) => Math.max(redactor.pendingTail(text), echo.pendingTail(text)),
  };
}
