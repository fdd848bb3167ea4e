import { type Key, keyLabel } from './api.js';

/** The picker's value for a key pasted by hand (not one of the account's listed keys). */
export const PASTED = '';

/** Whether the page can try this key: a web key only from its own domain, the Origin it checks. */
export function triableHere(k: Key, origin: string): boolean {
  return k.client !== 'web' || k.domain === origin;
}

/** A key the console may offer: not revoked, not an expired Test key. */
export function usable(k: Key, now: number): boolean {
  return !k.revoked_at && !(k.expires_at && Date.parse(k.expires_at) <= now);
}

/**
 * The account's usable keys to try (revoked ones never listed), by name and prefix; web keys of
 * another domain are listed but cannot be picked, and the line under the picker says why and how
 * to try them.
 */
export function DebugKeyPicker({
  keys,
  chosen,
  onChoose,
}: {
  keys: Key[];
  /** The chosen key's prefix, or PASTED. */
  chosen: string;
  onChoose: (prefix: string) => void;
}) {
  const origin = location.origin;
  return (
    <>
      <label>
        Key to try
        <select value={chosen} onChange={(e) => onChoose(e.target.value)}>
          {keys.map((k) => (
            <option key={k.id} value={k.key_prefix} disabled={!triableHere(k, origin)}>
              {k.kind === 'test' ? 'Test' : 'Live'} {keyLabel(k)}{' '}
              {k.client === 'web'
                ? triableHere(k, origin)
                  ? `(web, ${k.domain})`
                  : `(web, ${k.domain}: try it from its domain)`
                : '(mobile)'}
            </option>
          ))}
          <option value={PASTED}>Another key: paste it below</option>
        </select>
      </label>
      <p className="hint" data-testid="web-key-note">
        Web keys work here only when their domain is this dashboard's ({origin}): the browser sends
        this page's Origin, which a web key refuses for any other domain. Try one from a page served
        at its domain, or send with curl and <code>-H "Origin: https://your.domain"</code>.
      </p>
    </>
  );
}
