// Reading the `id` of a JSON-RPC message that is too large to keep: the bytes
// stream through a small tokenizer that keeps only its state and the value of a
// top-level "id" member, so that the error reply can name the request. Memory
// stays constant whatever the message holds.

/** The longest id text kept; longer ids are not read (the reply then has id null), nor served (see http.ts). */
export const MAX_ID_CHARS = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Feeds bytes of one JSON text and tells the value of its top-level `"id"`
 * member, when that is a string or an integer. Anything it does not follow
 * (deep nesting is fine, malformed text is not) leaves the id unknown.
 */
export class IdScanner {
  #depth = 0;
  #inString = false;
  #escaped = false;
  // The top-level string just read, while it may still turn out to be a key.
  #string: number[] | undefined;
  #lastKey: string | undefined;
  #expectKey = false;
  #afterColon = false;
  #value: number[] | undefined;
  #valueIsString = false;
  #found: string | number | undefined;
  #broken = false;

  /** Feeds the next bytes. */
  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.#broken && this.#found === undefined; i++) this.#byte(bytes[i]);
  }

  /** The id, once read; undefined when absent, unreadable or not a string or integer. */
  get id(): string | number | undefined {
    if (this.#found !== undefined) return this.#found;
    // A number ends at the delimiter after it; a cut message may end right there.
    if (this.#value && !this.#valueIsString) return this.#number();
    return undefined;
  }

  #number(): number | undefined {
    const text = String.fromCharCode(...this.#value!).trim();
    if (!/^-?(0|[1-9][0-9]*)$/.test(text)) return undefined;
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : undefined;
  }

  #byte(b: number): void {
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) this.#escaped = true;
      else if (b === QUOTE) {
        this.#inString = false;
        if (this.#value && this.#valueIsString) return this.#finishStringValue();
        return;
      }
      const keep = this.#value && this.#valueIsString ? this.#value : this.#string;
      if (keep) {
        if (keep.length >= MAX_ID_CHARS * 6) {
          if (keep === this.#value) this.#broken = true;
          else this.#string = undefined;
        } else keep.push(b);
      }
      return;
    }
    if (this.#value && !this.#valueIsString) {
      if (b === 0x2c || b === 0x7d || b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
        const n = this.#number();
        this.#value = undefined;
        if (n !== undefined) this.#found = n;
        else this.#broken = true;
        return;
      }
      if (this.#value.length > 32) this.#broken = true;
      else this.#value.push(b);
      return;
    }
    switch (b) {
      case QUOTE:
        this.#inString = true;
        if (this.#depth === 1 && this.#afterColon && this.#lastKey === "id") {
          this.#value = [];
          this.#valueIsString = true;
        } else if (this.#depth === 1 && this.#expectKey) this.#string = [];
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.#depth++;
        if (this.#depth === 1) this.#expectKey = b === 0x7b;
        if (this.#depth === 2 && this.#afterColon) this.#afterColon = false;
        return;
      case 0x7d:
      case 0x5d:
        this.#depth--;
        return;
      case 0x3a: // :
        if (this.#depth === 1 && this.#string) {
          this.#lastKey = decodeKey(this.#string);
          this.#string = undefined;
          this.#afterColon = true;
          this.#expectKey = false;
        }
        return;
      case 0x2c: // ,
        if (this.#depth === 1) {
          this.#expectKey = true;
          this.#afterColon = false;
          this.#lastKey = undefined;
        }
        return;
      case 0x20:
      case 0x0a:
      case 0x0d:
      case 0x09:
        return;
      default:
        if (this.#depth === 1 && this.#afterColon && this.#lastKey === "id") {
          this.#value = [b];
          this.#valueIsString = false;
        }
        this.#afterColon = false;
    }
  }

  #finishStringValue(): void {
    try {
      const text = JSON.parse(`"${new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(this.#value!))}"`);
      if (typeof text === "string" && text.length <= MAX_ID_CHARS) this.#found = text;
      else this.#broken = true;
    } catch {
      this.#broken = true;
    }
    this.#value = undefined;
  }
}

function decodeKey(bytes: number[]): string | undefined {
  if (bytes.length > 16) return undefined;
  try {
    return JSON.parse(`"${String.fromCharCode(...bytes)}"`);
  } catch {
    return undefined;
  }
}
