/**
 * The key values this tab has seen (shown once at creation, or pasted into the debug console),
 * kept in sessionStorage so the debug console still has them after a reload: this tab only,
 * readable by this origin's scripts only (as the CSRF token is), gone when the tab closes or on
 * log out. Herald itself keeps only each key's hash. Keyed by the key's prefix, which the
 * account's key list shows, so the console's picker can find a value for a listed key.
 */
const VAULT = 'herald.keys';

function read(): Record<string, string> {
  try {
    return JSON.parse(sessionStorage.getItem(VAULT) ?? '{}') as Record<string, string>;
  } catch {
    return {};
  }
}

/** The part of a key the account's list shows (auth's KEY_PREFIX_LENGTH). */
export function prefixOf(key: string): string {
  return key.slice(0, 12);
}

export function rememberKey(key: string): void {
  const k = key.trim();
  if (!/^hk_(live|test)_[0-9A-Za-z]{43}$/.test(k)) return;
  sessionStorage.setItem(VAULT, JSON.stringify({ ...read(), [prefixOf(k)]: k }));
}

export function recallKey(prefix: string): string | undefined {
  return read()[prefix];
}

/** Drops the values of keys no longer usable (revoked), so they are never offered again. */
export function forgetKeys(prefixes: string[]): void {
  const all = read();
  for (const p of prefixes) delete all[p];
  sessionStorage.setItem(VAULT, JSON.stringify(all));
}

export function forgetAllKeys(): void {
  sessionStorage.removeItem(VAULT);
}
