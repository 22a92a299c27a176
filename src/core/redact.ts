// Keeps secret values out of everything Brain writes: event logs, error messages, stderr tails, the daemon's
// output. A Redactor is fed the values a host or session knows to be secret (provider keys, MCP `${VAR}`
// values, token values, secret-named environment variables) and replaces each with `[redacted:NAME]`.
import { FormFilter } from "./form-filter.js";
import { encodedForms, MIN_SECRET_LENGTH } from "./secret-forms.js";

export { MIN_SECRET_LENGTH };

export interface Secret {
  /** What the replacement says: the variable the value came from, or a label such as "token". */
  name: string;
  value: string;
}

const longestFirst = (a: Secret, b: Secret) => b.value.length - a.value.length;

/** Environment variables whose names say they hold a secret (OPENAI_API_KEY, GH_TOKEN, DB_PASSWORD, …). */
export const SECRET_NAME = /(API_?KEY|_KEY$|^KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)/i;

/** The environment's secrets: every secret-named variable, and `names` (say, a provider's `api_key_env`). */
export function envSecrets(env: NodeJS.ProcessEnv, names: Iterable<string> = []): Secret[] {
  const wanted = new Set(names);
  const out: Secret[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value && (wanted.has(name) || SECRET_NAME.test(name))) out.push({ name, value });
  }
  return out;
}

export class Redactor {
  /** Longest first, so a secret that contains another is replaced whole. */
  private secrets: Secret[] = [];
  /**
   * The secrets and, where it differs, each one as it is written inside a JSON string (a `"`, `\` or control
   * character escaped): a body or error that quotes JSON (a server's answer, a tool's result) holds that form. And
   * each one's encoded forms (./secret-forms.ts): a tool's output of the key base64'd or URL-encoded. Longest first,
   * as `secrets`.
   */
  private forms: Secret[] = [];
  /** Every UTF-16 unit of every secret (pendingTail), by code: a delta's tail is checked per delta, on the hot path. */
  private asciiUnits = new Uint8Array(128);
  private otherUnits = new Set<number>();
  /** Tells, from a few characters of a text, that it holds no form: most text, passed with no search (redact). */
  private filter = FormFilter.NONE;

  constructor(secrets: Iterable<Secret> = []) {
    this.add(secrets);
  }

  /**
   * Adds `more` from now on: a session learns some of its secrets only once its harness runs (the token in an
   * extension host's NUI_API_URL), and its log, which holds this redactor, must keep them out from then on.
   */
  add(more: Iterable<Secret>): void {
    const known = new Set(this.secrets.map((secret) => secret.value));
    const fresh: Secret[] = [];
    for (const secret of more) {
      if (secret.value.length >= MIN_SECRET_LENGTH && !known.has(secret.value)) {
        known.add(secret.value);
        fresh.push(secret);
      }
    }
    if (fresh.length === 0) return;
    // Only what is new is derived: a form costs microseconds, and a record shown is redacted by a redactor made
    // with() the host's secrets and the record's own.
    this.secrets = [...this.secrets, ...fresh].sort(longestFirst);
    const before = new Map(this.forms.map((form) => [form.value, form]));
    const forms = new Map(before);
    for (const secret of fresh) forms.set(secret.value, secret);
    for (const { name, value } of fresh) {
      const escaped = JSON.stringify(value).slice(1, -1);
      if (!forms.has(escaped)) forms.set(escaped, { name, value: escaped });
      for (const { text } of encodedForms(value)) {
        if (!forms.has(text)) forms.set(text, { name, value: text });
      }
    }
    this.forms = [...forms.values()].sort(longestFirst);
    const added = [...forms.keys()].filter((value) => !before.has(value));
    for (const value of added) {
      for (let i = 0; i < value.length; i++) {
        const unit = value.charCodeAt(i);
        if (unit < 128) this.asciiUnits[unit] = 1;
        else this.otherUnits.add(unit);
      }
    }
    this.filter = this.filter.with(added);
  }

  get maxLength(): number {
    return this.forms[0]?.value.length ?? 0;
  }

  /** The values redacted (none shorter than MIN_SECRET_LENGTH). */
  get values(): readonly Secret[] {
    return this.secrets;
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  /** This redactor's secrets and `more`. */
  with(more: Iterable<Secret>): Redactor {
    const out = new Redactor();
    out.secrets = this.secrets;
    out.forms = this.forms;
    out.asciiUnits = new Uint8Array(this.asciiUnits);
    out.otherUnits = new Set(this.otherUnits);
    out.filter = this.filter;
    out.add(more);
    return out;
  }

  redact(text: string): string {
    if (this.secrets.length === 0 || text.length < MIN_SECRET_LENGTH) return text;
    // With its encoded forms a secret has several times the searches it had, on the relay's hot path: a look at a
    // few of the text's characters first passes most text with none.
    if (!this.filter.mayHold(text)) return text;
    let out = text;
    for (const { name, value } of this.forms) {
      if (out.includes(value)) out = out.split(value).join(`[redacted:${name}]`);
    }
    return out;
  }

  /** Every string in a JSON-like value (object keys are left alone); the value itself is not changed. */
  redactDeep<T>(value: T): T {
    if (this.secrets.length === 0) return value;
    return this.walk(value) as T;
  }

  /**
   * How many characters at the end of `text` a stream holds back, in case the next piece completes a secret there.
   * Never chosen by comparing the text with the secrets: a tail held only when it starts a secret told whoever made
   * a model end a delta with a guess (any tenant, through its own session) that the guess starts one, and so let
   * it read out a key or another tenant's token a character a time. The trailing run of characters that occur in
   * some secret is held instead, whatever their order: a secret's start is inside it, and what the run's length
   * says is only which characters the secrets use.
   */
  pendingTail(text: string): number {
    const most = Math.min(text.length, this.maxLength - 1);
    let held = 0;
    while (held < most && this.inSomeSecret(text.charCodeAt(text.length - 1 - held))) held++;
    return held;
  }

  private inSomeSecret(unit: number): boolean {
    return unit < 128 ? this.asciiUnits[unit] === 1 : this.otherUnits.has(unit);
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) {
      let changed = false;
      const out = value.map((item) => {
        const next = this.walk(item);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? out : value;
    }
    if (value !== null && typeof value === "object") {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const next = this.walk(item);
        if (next !== item) changed = true;
        out[key] = next;
      }
      return changed ? out : value;
    }
    return value;
  }
}

/**
 * The last `max` characters of `text`, for an error message. When that cuts into a word, the cut word is dropped:
 * a secret cut in two would otherwise show its end, which no redactor (matching whole values) recognises.
 */
export function tailOf(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(-max).replace(/^\S*\s*/, "");
}

/** The first `max` characters of `text`, for an error message; a word the cut falls in is dropped, as in tailOf. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, max).replace(/\s*\S*$/, "");
}
