import { type Client, HeraldError, type KeyScope } from '@herald/proto';

/** What the token rule looks at in a key. */
export interface TokenRuleKey {
  client: Client;
  scope: KeyScope;
  inbox_days: number | null;
}

/**
 * Whether a key is made requiring recipient tokens unless its creator opts out with
 * `allow_unsigned_recipients`. A web key is public by design (every visitor's page holds it), and
 * an inbox keeps each event for days, so with the key and one user's id a stranger would read that
 * user's history; a plain key only exposes live events, the spec's model, where tokens stay opt-in.
 * Issue 40 (push mode) adds its line here, `|| key.push_after_ms != null`: push subscriptions are
 * registered from browsers too.
 */
export function requiresTokenByDefault(key: Pick<TokenRuleKey, 'client' | 'inbox_days'>): boolean {
  return key.client === 'web' && key.inbox_days !== null;
}

/** What a key request asks about tokens (the account API's body, the CLI's flags). */
export interface TokenChoice {
  require_token?: boolean | undefined;
  allow_unsigned_recipients?: boolean | undefined;
}

/** The resolved choice, and whether tokens came on by {@link requiresTokenByDefault}. */
export interface TokenRule {
  require_token: boolean;
  allow_unsigned_recipients: boolean;
  by_default: boolean;
}

const OPT_OUT = 'allow_unsigned_recipients';

/**
 * Applies the rule: tokens as asked, else on for the keys {@link requiresTokenByDefault} names
 * unless opted out. Throws naming the field: the opt-out together with require_token, the opt-out
 * on a key the rule does not cover, `require_token: false` on one it does (the opt-out has to be
 * named), and a default that a dispatch key (no sockets, so no tokens) cannot meet.
 */
export function resolveTokenRule(choice: TokenChoice, key: TokenRuleKey): TokenRule {
  const optOut = choice.allow_unsigned_recipients === true;
  const byDefault = requiresTokenByDefault(key);
  if (optOut && choice.require_token === true) {
    throw new HeraldError(
      'invalid_field',
      `${OPT_OUT} leaves a key without the recipient tokens require_token asks for: give one of them`,
      { field: OPT_OUT },
    );
  }
  if (optOut && !byDefault) {
    throw new HeraldError(
      'invalid_field',
      `${OPT_OUT} is the opt-out for web keys in inbox mode, which require recipient tokens by default; this key does not require them unless asked: drop ${OPT_OUT}`,
      { field: OPT_OUT },
    );
  }
  if (byDefault && !optOut && choice.require_token === false) {
    throw new HeraldError(
      'invalid_field',
      `a web key in inbox mode requires recipient tokens (anyone holding the public key and a user's id could read that user's inbox): leave require_token out, or opt out explicitly with ${OPT_OUT}`,
      { field: 'require_token' },
    );
  }
  const requireToken = choice.require_token ?? (byDefault && !optOut);
  if (requireToken && key.scope === 'dispatch') {
    throw choice.require_token
      ? new HeraldError(
          'invalid_field',
          'require_token is for keys that open sockets, and a dispatch key cannot: use scope subscribe (or both) with require_token, or drop require_token',
          { field: 'require_token' },
        )
      : new HeraldError(
          'invalid_field',
          `a web key in inbox mode opens sockets with recipient tokens, and a dispatch key opens none: use scope subscribe or both, a mobile key for a server that reads inboxes, or opt out with ${OPT_OUT}`,
          { field: 'scope' },
        );
  }
  return {
    require_token: requireToken,
    allow_unsigned_recipients: optOut,
    by_default: requireToken && choice.require_token === undefined,
  };
}

/** What the flag line reads of a key. */
export interface FlaggedKey extends TokenRuleKey {
  id: string;
  require_token: boolean;
  allow_unsigned_recipients: boolean;
  revoked_at: Date | null;
}

/**
 * The one line `key list`, the account API and the dashboard show for a web key whose sockets
 * need no recipient token: what anyone holding the public key and a user's id can do, and how to
 * turn tokens on. Null for the rest (mobile keys, keys with tokens, revoked keys, and web dispatch
 * keys without an inbox, which read nothing).
 */
export function unsignedRecipientsLine(key: FlaggedKey): string | null {
  if (key.client !== 'web' || key.require_token || key.revoked_at !== null) return null;
  const head = key.allow_unsigned_recipients
    ? `Created without recipient tokens on purpose (${OPT_OUT}): anyone`
    : 'No recipient tokens: anyone';
  const who = `${head} holding this public web key and a user's id`;
  if (key.scope === 'dispatch') {
    if (key.inbox_days === null) return null;
    return `${who} can read that user's stored inbox and mark it read (/inbox/*); a dispatch key cannot require tokens: revoke it, and read inboxes from your server with a mobile key.`;
  }
  const can =
    key.inbox_days === null
      ? "can open that user's socket and receive their live events"
      : `can open that user's socket, read their stored inbox (${key.inbox_days} days) and mark it read`;
  return `${who} ${can}. Turn tokens on: \`key require-token --key ${key.id}\` (dashboard: Require tokens).`;
}
