/**
 * One pass over a JSON text's bytes that validates it whole (as strictly as JSON.parse) and
 * records where each top-level member's value sits, without building any value. Ingress forwards
 * the sender's payload as the exact bytes it received, so numbers beyond 2^53, key order, and
 * formatting inside the payload reach the socket untouched, and the payload is never
 * materialised as an object.
 *
 * Structural characters are ASCII, so scanning UTF-8 bytes is exact; UTF-8 validity itself is the
 * caller's check (`isUtf8`). Malformed input throws a SyntaxError naming the byte position.
 */

export interface Span {
  /** Index of the value's first byte (or character, for the string helpers). */
  start: number;
  /** Index just past the value's last byte (or character). */
  end: number;
}

/** What the top level of a JSON text is, and for an object where its members' values sit. */
export type Scanned =
  | { kind: 'object'; members: Map<string, Span> }
  | { kind: 'array' | 'string' | 'number' | 'boolean' | 'null' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const isWs = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number | undefined) => c !== undefined && c >= ZERO && c <= NINE;
const isHex = (c: number | undefined) =>
  c !== undefined && (isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
const LITERALS = [
  ['true', 'boolean'],
  ['false', 'boolean'],
  ['null', 'null'],
] as const;
const ESCAPES = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]); // " \ / b f n r t
const utf8 = new TextDecoder();

/**
 * Validates `bytes` as one JSON text and, when it is an object, returns where each member's value
 * sits. Keys are compared after unescaping (`"pay\u006coad"` is `payload`), and when a key repeats
 * the last one wins, as with JSON.parse.
 */
export function scanJson(bytes: Uint8Array): Scanned {
  const scanner = new Scanner(bytes);
  let i = scanner.skipWs(0);
  let result: Scanned;
  if (bytes[i] === OPEN_BRACE) {
    const members = new Map<string, Span>();
    i = scanner.object(i, members);
    result = { kind: 'object', members };
  } else {
    const kind = scanner.kindAt(i);
    i = scanner.value(i);
    result = { kind };
  }
  i = scanner.skipWs(i);
  if (i !== bytes.length) scanner.fail(i, 'end of input');
  return result;
}

/** The scanner's steps, for scans that record more than the top level (batch-json.ts). */
export class Scanner {
  readonly #b: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.#b = bytes;
  }

  skipWs(i: number): number {
    while (isWs(this.#b[i])) i++;
    return i;
  }

  fail(i: number, wanted: string): never {
    const c = this.#b[i];
    const got = c === undefined ? 'end of input' : `'${String.fromCharCode(c)}'`;
    throw new SyntaxError(`expected ${wanted} at position ${i}, found ${got}`);
  }

  kindAt(i: number): 'array' | 'string' | 'number' | 'boolean' | 'null' {
    const c = this.#b[i];
    if (c === OPEN_BRACKET) return 'array';
    if (c === QUOTE) return 'string';
    if (c === 0x74 || c === 0x66) return 'boolean';
    if (c === 0x6e) return 'null';
    return 'number';
  }

  /** The top-level object at `i` (its `{`), recording each member's span; returns the index past `}`. */
  object(i: number, members: Map<string, Span>): number {
    i = this.skipWs(i + 1);
    if (this.#b[i] === CLOSE_BRACE) return i + 1;
    for (;;) {
      if (this.#b[i] !== QUOTE) this.fail(i, "'\"'");
      const keyEnd = this.string(i);
      const key = this.key(i, keyEnd);
      i = this.skipWs(keyEnd);
      if (this.#b[i] !== COLON) this.fail(i, "':'");
      const start = this.skipWs(i + 1);
      const end = this.value(start);
      members.delete(key); // a repeated key moves to the end, as the last one wins
      members.set(key, { start, end });
      i = this.skipWs(end);
      if (this.#b[i] === COMMA) {
        i = this.skipWs(i + 1);
        continue;
      }
      if (this.#b[i] !== CLOSE_BRACE) this.fail(i, "',' or '}'");
      return i + 1;
    }
  }

  /**
   * Validates the value starting at `i`; returns the index just past it. Nested containers are
   * walked with an explicit stack, so a deeply nested payload cannot overflow the call stack.
   */
  value(i: number): number {
    const open: number[] = [];
    for (;;) {
      const c = this.#b[i];
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        const close = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
        i = this.skipWs(i + 1);
        if (this.#b[i] === close) {
          i++;
        } else {
          open.push(close);
          if (close === CLOSE_BRACE) i = this.#memberKey(i);
          continue;
        }
      } else if (c === QUOTE) {
        i = this.string(i);
      } else if (c === MINUS || isDigit(c)) {
        i = this.#number(i);
      } else {
        i = this.#literal(i);
      }
      // After a complete value: close every container that ends here, or move to its next item.
      for (;;) {
        const close = open.at(-1);
        if (close === undefined) return i;
        i = this.skipWs(i);
        const d = this.#b[i];
        if (d === COMMA) {
          i = this.skipWs(i + 1);
          if (close === CLOSE_BRACE) i = this.#memberKey(i);
          break;
        }
        if (d !== close) this.fail(i, `',' or '${String.fromCharCode(close)}'`);
        open.pop();
        i++;
      }
    }
  }

  /** `i` at a nested member's key: skips `"key" :` and returns the index of its value. */
  #memberKey(i: number): number {
    if (this.#b[i] !== QUOTE) this.fail(i, "'\"'");
    i = this.skipWs(this.string(i));
    if (this.#b[i] !== COLON) this.fail(i, "':'");
    return this.skipWs(i + 1);
  }

  /** `i` at the opening quote; returns the index just past the closing quote. */
  string(i: number): number {
    const b = this.#b;
    let j = i + 1;
    for (;;) {
      const c = b[j];
      if (c === undefined) this.fail(j, 'a closing quote');
      if (c === QUOTE) return j + 1;
      if (c < 0x20) this.fail(j, 'a string character (control characters must be escaped)');
      if (c === BACKSLASH) {
        const e = b[j + 1];
        if (e === 0x75) {
          // \uXXXX
          for (let k = j + 2; k < j + 6; k++) if (!isHex(b[k])) this.fail(k, 'a hex digit');
          j += 6;
          continue;
        }
        if (e === undefined || !ESCAPES.has(e)) this.fail(j + 1, 'an escape character');
        j += 2;
        continue;
      }
      j++;
    }
  }

  #number(i: number): number {
    const b = this.#b;
    let j = i;
    if (b[j] === MINUS) j++;
    if (b[j] === ZERO) j++;
    else if (isDigit(b[j])) while (isDigit(b[j])) j++;
    else this.fail(j, 'a digit');
    if (b[j] === DOT) {
      j++;
      if (!isDigit(b[j])) this.fail(j, 'a digit');
      while (isDigit(b[j])) j++;
    }
    if (b[j] === 0x65 || b[j] === 0x45) {
      j++;
      if (b[j] === PLUS || b[j] === MINUS) j++;
      if (!isDigit(b[j])) this.fail(j, 'a digit');
      while (isDigit(b[j])) j++;
    }
    return j;
  }

  #literal(i: number): number {
    for (const [word] of LITERALS) {
      let k = 0;
      while (k < word.length && this.#b[i + k] === word.charCodeAt(k)) k++;
      if (k === word.length) return i + k;
    }
    return this.fail(i, 'a value');
  }

  /** The member key whose quoted text spans `start` to `end`, unescaped. */
  key(start: number, end: number): string {
    const raw = utf8.decode(this.#b.subarray(start, end));
    // Only keys with escapes need decoding; JSON.parse does it exactly as a body parse would.
    return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }
}
