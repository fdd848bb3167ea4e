import {
  DispatchStatus,
  isUuidV4,
  TOPIC_EXCLUDE_MAX,
  TOPIC_MEMBERS_PER_CALL_MAX,
  TOPIC_NAME,
} from '@herald/proto/wire';
import { HeraldError } from './errors.js';
import { checkHeaders, failed, postJson, resultOfBody } from './notify.js';
import { checkClient, type Resolved } from './options.js';
import type { Client, NotifyFailed } from './types.js';

/**
 * Topics (issue 44) for a customer's server: membership (`PUT`/`DELETE`/`GET`
 * `/topics/{topic}/members`, `DELETE /topics/{topic}`) and a topic event (`POST /notify` with
 * `topic`). Server-only: `@herald/sdk/server` carries it, the browser bundle never imports it.
 * Server outcomes resolve to results; a call that could never succeed throws a TypeError naming
 * the field.
 */

/** Options of one membership call. */
export interface TopicCallOptions {
  /** Sent as the `Origin` header (servers using a web key). */
  origin?: string;
  /** Overrides the instance's `client` for this call. */
  client?: Client;
}

/** A membership change: `changed` members added (or removed); `members` after it. */
export interface TopicChanged {
  status: 'ok';
  topic: string;
  changed: number;
  members: number;
  httpStatus: number;
  error?: undefined;
}

/** One page of a topic's members, in recipient order; pass `nextCursor` on until it is null. */
export interface TopicPage {
  status: 'ok';
  topic: string;
  /** How many members the topic has in all. */
  members: number;
  recipients: string[];
  nextCursor: string | null;
  httpStatus: number;
  error?: undefined;
}

/** The topic is gone; `members` it had. */
export interface TopicDeleted {
  status: 'ok';
  topic: string;
  deleted: true;
  members: number;
  httpStatus: number;
  error?: undefined;
}

/** `notify({ topic, payload, exclude? })`: one event to every member of a topic. */
export interface TopicNotifyInput {
  /** The topic's name: 1 to 128 of A-Z a-z 0-9 _ . : - */
  topic: string;
  /** Any JSON value; every member's copy carries it as sent. */
  payload: unknown;
  /** Up to 100 recipients (the actor) who get no copy. */
  exclude?: readonly string[];
  origin?: string;
  client?: Client;
  /** Sent as `Idempotency-Key`: a retried call with the same key fans out at most once. */
  idempotencyKey?: string;
}

/** The fan-out is durably accepted: `members` copies follow, each with its own id. */
export interface TopicAccepted {
  status: typeof DispatchStatus.accepted;
  /** The topic event's id: `/events/status` on it counts its copies. */
  id: string;
  members: number;
  httpStatus: number;
  error?: undefined;
}

export type TopicResult<T> = T | NotifyFailed;

/** `herald.topics` of `@herald/sdk/server`'s Herald. */
export class Topics {
  readonly #options: Resolved;

  constructor(options: Resolved) {
    this.#options = options;
  }

  /** Adds 1 to 10,000 recipients (idempotent); the first add makes the topic. */
  add(
    topic: string,
    recipients: readonly string[],
    opts?: TopicCallOptions,
  ): Promise<TopicResult<TopicChanged>> {
    return this.#change('PUT', 'topics.add', topic, recipients, opts);
  }

  /** Removes 1 to 10,000 recipients; non-members change nothing. */
  remove(
    topic: string,
    recipients: readonly string[],
    opts?: TopicCallOptions,
  ): Promise<TopicResult<TopicChanged>> {
    return this.#change('DELETE', 'topics.remove', topic, recipients, opts);
  }

  /** One page (1,000) of members; `cursor` is the page before's `nextCursor`. */
  async members(
    topic: string,
    opts: TopicCallOptions & { cursor?: string | null } = {},
  ): Promise<TopicResult<TopicPage>> {
    checkTopic(topic, 'topics.members');
    const client = callClient(this.#options, opts, 'topics.members');
    const { cursor } = opts;
    if (cursor !== undefined && cursor !== null && !isUuidV4(cursor)) {
      throw new TypeError(
        "Herald: topics.members cursor must be the page before's nextCursor, or null",
      );
    }
    const q = new URLSearchParams({ api_key: this.#options.apiKey, client });
    if (cursor) q.set('cursor', cursor);
    return answer<TopicPage>(
      await send(this.#options, 'GET', `${path(topic)}/members?${q}`, undefined, opts),
      (b) =>
        Array.isArray(b.recipients) && typeof b.members === 'number'
          ? {
              status: 'ok' as const,
              topic: String(b.topic),
              members: b.members,
              recipients: b.recipients as string[],
              nextCursor: typeof b.next_cursor === 'string' ? b.next_cursor : null,
            }
          : undefined,
    );
  }

  /** Deletes the topic and its membership; a topic the account does not have fails 404. */
  async delete(topic: string, opts: TopicCallOptions = {}): Promise<TopicResult<TopicDeleted>> {
    checkTopic(topic, 'topics.delete');
    const body = keyBody(this.#options, opts, 'topics.delete');
    return answer<TopicDeleted>(
      await send(this.#options, 'DELETE', path(topic), `{${body}}`, opts),
      (b) =>
        b.deleted === true && typeof b.members === 'number'
          ? {
              status: 'ok' as const,
              topic: String(b.topic),
              deleted: true as const,
              members: b.members,
            }
          : undefined,
    );
  }

  async #change(
    method: 'PUT' | 'DELETE',
    call: string,
    topic: string,
    recipients: readonly string[],
    opts: TopicCallOptions = {},
  ): Promise<TopicResult<TopicChanged>> {
    checkTopic(topic, call);
    checkRecipients(recipients, `${call} recipients`, 1, TOPIC_MEMBERS_PER_CALL_MAX);
    const body = `{${keyBody(this.#options, opts, call)},"recipients":${JSON.stringify(recipients)}}`;
    return answer<TopicChanged>(
      await send(this.#options, method, `${path(topic)}/members`, body, opts),
      (b) =>
        typeof b.changed === 'number' && typeof b.members === 'number'
          ? {
              status: 'ok' as const,
              topic: String(b.topic),
              changed: b.changed,
              members: b.members,
            }
          : undefined,
    );
  }
}

/** POSTs a topic event to `{baseUrl}/notify`. */
export async function notifyTopic(
  options: Resolved,
  input: TopicNotifyInput,
): Promise<TopicResult<TopicAccepted>> {
  checkTopic(input.topic, 'notify');
  checkHeaders(input, 'notify');
  let payloadJson: string | undefined;
  try {
    payloadJson = JSON.stringify(input.payload);
  } catch (err) {
    throw new TypeError(`Herald: notify payload must be JSON-serialisable: ${String(err)}`);
  }
  if (payloadJson === undefined) {
    throw new TypeError('Herald: notify payload is required: any JSON value');
  }
  let exclude = '';
  if (input.exclude !== undefined) {
    checkRecipients(input.exclude, 'notify exclude', 0, TOPIC_EXCLUDE_MAX);
    exclude = `,"exclude":${JSON.stringify(input.exclude)}`;
  }
  const body = `{"topic":${JSON.stringify(input.topic)},"payload":${payloadJson}${exclude},${keyBody(options, input, 'notify')}}`;
  return answer<TopicAccepted>(await postJson(options, '/notify', body, input), (b) =>
    b.status === DispatchStatus.accepted &&
    typeof b.id === 'string' &&
    typeof b.members === 'number'
      ? { status: DispatchStatus.accepted, id: b.id, members: b.members }
      : undefined,
  );
}

type Posted = Awaited<ReturnType<typeof postJson>>;

/**
 * `postJson` with another method: its fetch, wrapped to set the method (and no body for GET), so
 * the core's POST helper, which the browser bundle carries, stays as it is.
 */
function send(
  options: Resolved,
  method: 'GET' | 'PUT' | 'DELETE',
  route: string,
  body: string | undefined,
  opts: TopicCallOptions,
): Promise<Posted> {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const fetch: typeof globalThis.fetch = (url, init) =>
    fetchFn(url, { ...init, method, body: body ?? null });
  return postJson(
    typeof fetchFn === 'function' ? { ...options, fetch } : options,
    route,
    body ?? '',
    opts,
  );
}
type Body = Record<string, unknown>;

/** A success body read by `read` (undefined: not this route's), else the failed result. */
function answer<T extends { httpStatus: number }>(
  posted: Posted,
  read: (body: Body) => Omit<T, 'httpStatus'> | undefined,
): TopicResult<T> {
  if ('error' in posted) return posted;
  const { httpStatus } = posted;
  let parsed: unknown;
  try {
    parsed = JSON.parse(posted.text);
  } catch {
    parsed = undefined;
  }
  if (httpStatus !== 200 && httpStatus !== 202) {
    // Never a success for these statuses: the error's code, field and Retry-After, or unexpected.
    return resultOfBody(httpStatus, parsed, posted.retryAfter) as NotifyFailed;
  }
  const body = typeof parsed === 'object' && parsed !== null ? (parsed as Body) : undefined;
  const value = body && read(body);
  if (value) return { ...value, httpStatus } as T;
  return failed(
    httpStatus,
    new HeraldError(
      'unexpected_response',
      `Herald answered HTTP ${httpStatus} with a body that is not Herald's`,
      { httpStatus },
    ),
  );
}

const path = (topic: string) => `/topics/${encodeURIComponent(topic)}`;

function callClient(options: Resolved, opts: TopicCallOptions, call: string): Client {
  if (typeof opts !== 'object' || opts === null) {
    throw new TypeError(`Herald: ${call} options must be an object, or left out`);
  }
  const client = opts.client ?? options.client;
  checkClient(client, `${call} client`);
  checkHeaders(opts, call);
  return client;
}

/** `"api_key":…,"client":…` of a body, after the call's checks. */
function keyBody(options: Resolved, opts: TopicCallOptions, call: string): string {
  const client = callClient(options, opts, call);
  return `"api_key":${JSON.stringify(options.apiKey)},"client":${JSON.stringify(client)}`;
}

function checkTopic(topic: unknown, call: string): void {
  if (typeof topic !== 'string' || !TOPIC_NAME.test(topic)) {
    throw new TypeError(
      `Herald: ${call} topic must be 1 to 128 characters of A-Z, a-z, 0-9, _, ., : and - (e.g. project:42.followers)`,
    );
  }
}

function checkRecipients(list: unknown, name: string, min: number, max: number): void {
  if (!Array.isArray(list) || list.length < min || list.length > max) {
    throw new TypeError(`Herald: ${name} must be an array of ${min} to ${max} recipient UUIDs`);
  }
  const bad = list.findIndex((r) => !isUuidV4(r));
  if (bad >= 0) {
    throw new TypeError(
      `Herald: ${name}[${bad}] must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)`,
    );
  }
}
