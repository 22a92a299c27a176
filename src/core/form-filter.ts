// Tells that a text holds none of a redactor's forms (./redact.ts) from a few of its characters. With its encoded
// forms (./secret-forms.ts) a secret is ten or so strings to search for instead of one or two, and the session log
// redacts every delta on the relay's hot path: a search per form per delta cost more than the rest of the boundary.
//
// Every form is at least `shortest` characters long, so wherever one lies in a text it covers a whole GRAM-character
// piece of the text starting at a multiple of `stride` = shortest - GRAM + 1. Those pieces are looked up in a set of
// every piece of every form (as bits of a hash, so a miss is certain and a hit only possible): a text none of whose
// pieces is in it holds no form. A 200-character delta takes a few dozen look-ups at most; a form's pieces are as
// random as the secret, so prose and code rarely meet one and pass with no search.

/** The length of a piece looked up. */
const GRAM = 4;
/** Bits of the hash of a piece: 2^16 bits, 8 KiB a redactor. */
const HASH_BITS = 16;

export class FormFilter {
  /** Knows no form: holds none in any text. */
  static readonly NONE = new FormFilter(new Uint32Array((1 << HASH_BITS) / 32), Number.POSITIVE_INFINITY);

  private constructor(
    private readonly pieces: Uint32Array,
    private readonly shortest: number,
  ) {}

  /** Every form is at least `shortest` characters long. */
  private get stride(): number {
    return this.shortest - GRAM + 1;
  }

  /**
   * This filter's forms and `forms` (each at least GRAM + 1 characters long: a secret is MIN_SECRET_LENGTH at
   * least). A new filter: a redactor made with() another's secrets and more shares what it started from.
   */
  with(forms: readonly string[]): FormFilter {
    if (forms.length === 0) return this;
    const pieces = new Uint32Array(this.pieces);
    for (const form of forms) {
      for (let at = 0; at + GRAM <= form.length; at++) {
        const hash = pieceHash(form, at);
        pieces[hash >>> 5]! |= 1 << (hash & 31);
      }
    }
    return new FormFilter(pieces, Math.min(this.shortest, ...forms.map((form) => form.length)));
  }

  /** False when `text` holds none of the forms; true when it may. */
  mayHold(text: string): boolean {
    if (text.length < this.shortest) return false;
    const stride = this.stride;
    for (let at = 0; at + GRAM <= text.length; at += stride) {
      const hash = pieceHash(text, at);
      if ((this.pieces[hash >>> 5]! & (1 << (hash & 31))) !== 0) return true;
    }
    return false;
  }
}

/** A hash of the GRAM characters of `text` at `at`, HASH_BITS wide. */
function pieceHash(text: string, at: number): number {
  const packed =
    (text.charCodeAt(at) ^
      (text.charCodeAt(at + 1) << 8) ^
      (text.charCodeAt(at + 2) << 16) ^
      (text.charCodeAt(at + 3) << 24)) |
    0;
  return Math.imul(packed, 0x9e3779b1) >>> (32 - HASH_BITS);
}
