/**
 * Finds where a top-level member's value sits in a JSON text, without parsing or re-serialising
 * it. Ingress forwards the sender's payload as the exact bytes it received, so numbers beyond
 * 2^53, key order, and formatting inside the payload reach the socket untouched.
 *
 * The text is expected to be valid JSON (ingress has already run JSON.parse on it); the scanner
 * still throws a SyntaxError on malformed input instead of returning a wrong span.
 */

export interface Span {
  /** Index of the value's first character. */
  start: number;
  /** Index just past the value's last character. */
  end: number;
}

const WS = new Set([' ', '\t', '\n', '\r']);

/**
 * The span of the value of `name` in the top-level object `text`, or undefined when the object
 * has no such member. Keys are compared after unescaping (`"pay\u006coad"` is `payload`), and
 * when a key repeats the last one wins, as with JSON.parse.
 */
export function findMemberSpan(text: string, name: string): Span | undefined {
  let i = skipWs(text, 0);
  expect(text, i, '{');
  i = skipWs(text, i + 1);
  let found: Span | undefined;
  if (text[i] === '}') return checkTrailing(text, i + 1, found);
  for (;;) {
    expect(text, i, '"');
    const keyEnd = skipString(text, i);
    const key = decodeKey(text, i, keyEnd);
    i = skipWs(text, keyEnd);
    expect(text, i, ':');
    const start = skipWs(text, i + 1);
    const end = skipValue(text, start);
    if (key === name) found = { start, end };
    i = skipWs(text, end);
    if (text[i] === ',') {
      i = skipWs(text, i + 1);
      continue;
    }
    expect(text, i, '}');
    return checkTrailing(text, i + 1, found);
  }
}

/** The original text of the member's value, or undefined when absent. */
export function extractMember(text: string, name: string): string | undefined {
  const span = findMemberSpan(text, name);
  return span === undefined ? undefined : text.slice(span.start, span.end);
}

function checkTrailing(text: string, i: number, found: Span | undefined): Span | undefined {
  const rest = skipWs(text, i);
  if (rest !== text.length) fail(text, rest, 'end of input');
  return found;
}

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text[i] as string)) i++;
  return i;
}

function expect(text: string, i: number, char: string): void {
  if (text[i] !== char) fail(text, i, `'${char}'`);
}

function fail(text: string, i: number, wanted: string): never {
  const got = i >= text.length ? 'end of input' : `'${text[i]}'`;
  throw new SyntaxError(`expected ${wanted} at position ${i}, found ${got}`);
}

/** `i` is at the opening quote; returns the index just past the closing quote. */
function skipString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 0x22) return j + 1; // "
    if (c === 0x5c) {
      j += 2; // a backslash always escapes exactly the next character (\uXXXX's digits are plain)
      continue;
    }
    if (c < 0x20) fail(text, j, 'a string character (control characters must be escaped)');
    j++;
  }
  return fail(text, j, 'a closing quote');
}

function decodeKey(text: string, start: number, end: number): string {
  const raw = text.slice(start, end);
  // Only keys with escapes need decoding; JSON.parse does it exactly as the body parse did.
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

/** `i` is at the value's first character; returns the index just past its last one. */
function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c === '{' || c === '[') return skipContainer(text, i);
  // A number or a literal (true, false, null) runs until a delimiter.
  let j = i;
  while (j < text.length && !isDelimiter(text[j] as string)) j++;
  if (j === i) fail(text, i, 'a value');
  return j;
}

function isDelimiter(c: string): boolean {
  return c === ',' || c === '}' || c === ']' || c === ':' || c === '"' || WS.has(c);
}

/**
 * Skips a nested object or array by counting brackets outside strings. Structure inside was
 * validated by JSON.parse; the counter only has to find where the value ends.
 */
function skipContainer(text: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < text.length) {
    const c = text[j];
    if (c === '"') {
      j = skipString(text, j);
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  return fail(text, j, `a closing '${text[i] === '{' ? '}' : ']'}'`);
}
