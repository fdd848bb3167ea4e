/**
 * @herald/sdk/server: what a customer's server does for Herald, never shipped to browsers (a
 * separate entry: the browser build never imports it). It signs recipient tokens with a key's
 * signing secret, which must never reach a browser, and manages topics (issue 44):
 * {@link HeraldServer} is the client with `topics` and `notify({ topic })`.
 */
import {
  RECIPIENT_TOKEN_ALG,
  type RecipientTokenInput,
  recipientTokenClaims,
  TokenInputError,
} from '@herald/proto/wire';
import { SignJWT } from 'jose';
import { Herald } from './herald.js';
import { type HeraldOptions, type Resolved, resolveOptions } from './options.js';
import {
  notifyTopic,
  type TopicAccepted,
  type TopicNotifyInput,
  type TopicResult,
  Topics,
} from './topics.js';
import type { NotifyInput, NotifyResult } from './types.js';

export { DispatchStatus } from '@herald/proto/wire';
// The server entry's own copies (a bundle of its own): check `instanceof` against these.
export { HeraldError } from './errors.js';
export type {
  TopicAccepted,
  TopicCallOptions,
  TopicChanged,
  TopicDeleted,
  TopicNotifyInput,
  TopicPage,
  TopicResult,
  Topics,
} from './topics.js';
export { TokenInputError };

/**
 * The Herald client for a customer's server: everything `Herald` does, plus topics (issue 44):
 * `topics.add`, `.remove`, `.members`, `.delete`, and `notify({ topic, payload, exclude? })`,
 * which sends one event to every member. Results, not throws, for server outcomes; a TypeError
 * naming the field for a call that could never succeed.
 */
export class HeraldServer extends Herald {
  /** The account's topics: membership, as the key's account. */
  readonly topics: Topics;
  readonly #http: Resolved;

  constructor(options: HeraldOptions) {
    super(options);
    // The HTTP calls need no device id: resolve without one (no store is touched).
    this.#http = resolveOptions({ ...options, device: false });
    this.topics = new Topics(this.#http);
  }

  /** One event to one recipient (as `Herald`'s), or to every member of a topic. */
  override notify(input: NotifyInput): Promise<NotifyResult>;
  override notify(input: TopicNotifyInput): Promise<TopicResult<TopicAccepted>>;
  override notify(
    input: NotifyInput | TopicNotifyInput,
  ): Promise<NotifyResult | TopicResult<TopicAccepted>> {
    if (typeof input === 'object' && input !== null && 'topic' in input) {
      if ('recipient' in input) {
        return Promise.reject(new TypeError('Herald: notify takes recipient or topic, not both'));
      }
      return notifyTopic(this.#http, input);
    }
    return super.notify(input);
  }
}

/** What {@link recipientToken} signs. */
export interface RecipientTokenOptions {
  /** The key's signing secret (`hk_sign_…`), shown once when tokens were turned on. */
  secret: string;
  /** The user's id (UUID v4): the token opens this recipient's sockets only. */
  recipient: string;
  /** How long the token lives: seconds, or `"90s"`, `"15m"`, `"1h"`. Default `"1h"`; at most 24 h. */
  ttl?: number | string;
}

const encoder = new TextEncoder();

/**
 * A recipient token for `recipient`: a JWT signed HS256 with the key's signing secret, claims
 * `sub` (the recipient, lower case), `iat` and `exp`, nothing else. Hand it to the browser (the
 * SDK's `getToken`), which connects with it; the SDK asks again before it expires. Throws a
 * {@link TokenInputError} (a TypeError whose `field` is `secret`, `recipient` or `ttl`) for bad
 * input, before signing anything.
 */
export async function recipientToken(options: RecipientTokenOptions): Promise<string> {
  const input: RecipientTokenInput = options ?? {};
  const { secret, claims } = recipientTokenClaims(input, Date.now());
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: RECIPIENT_TOKEN_ALG, typ: 'JWT' })
    .sign(encoder.encode(secret));
}
