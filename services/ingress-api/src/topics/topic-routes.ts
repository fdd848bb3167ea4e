import type { KeyVerifier } from '@herald/access';
import type { NatsLink } from '@herald/kit';
import {
  Client,
  HeraldError,
  invalidApiKey,
  NOTIFY_PATHS,
  TOPIC_MEMBERS_PAGE_MAX,
  TopicMembersBody,
  TopicName,
  TopicRecipient,
  type VerifiedKey,
} from '@herald/proto';
import type { TopicClient } from '@herald/status-client';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Authorise } from '../authorise.js';
import { guardedRoute, type RouteGuard } from '../guarded-route.js';
import { checkJsonRequest, readJsonBody } from '../http-body.js';

export interface TopicRouteOptions {
  topics: Pick<TopicClient, 'change' | 'list' | 'delete'>;
  link?: NatsLink | undefined;
  /** The dispatch's authorise step: the same key, client, Origin and scope rules as /notify. */
  authorise: Authorise;
  /** The same verifier: the key's own client, when the request names none. */
  verifier: Pick<KeyVerifier, 'verify'>;
  /** TOPIC_MEMBERS_MAX_BYTES. */
  bodyLimitBytes: number;
  trustedProxyHops: number;
  checkSource(source: string | undefined): void;
  countFailure(source: string | undefined, err: unknown): void;
  /** A key's refusals for the dashboard (issue 45). */
  refusals?: RouteGuard['refusals'];
}

/** What a 503 names while NATS is down. */
const UNREACHABLE = 'topics could not be reached';
/** Where the topic routes hang: under every base of the notify routes (`''`, `/bff_v001`). */
const BASES = NOTIFY_PATHS.map((path) => path.slice(0, -'/notify'.length));

/**
 * The topic routes (issue 44): `PUT`/`DELETE {base}/topics/{topic}/members` add or remove up to
 * 10,000 recipients (idempotently), `GET` lists them a page at a time, `DELETE {base}/topics/{topic}`
 * deletes the topic. Each is authorised as `/notify` is (a dispatch key of the caller's client,
 * its Origin, scope `dispatch`); the account is the verified key's, never the request's, so a key
 * of another account sees no such topic. Refusals are the plain error shape.
 */
export function mountTopicRoutes(router: Router, opts: TopicRouteOptions): void {
  for (const base of BASES) {
    const members = `${base}/topics/:topic/members`;
    const change = (op: 'add' | 'remove') =>
      guardedRoute(opts, UNREACHABLE, async (ctx) => {
        const topic = topicOf(ctx);
        checkJsonRequest(
          ctx.get('Content-Type') || undefined,
          ctx.get('Content-Encoding') || undefined,
        );
        const raw = await readJsonBody(ctx.req, opts.bodyLimitBytes);
        const body = parseMembersBody(raw);
        const key = await authorised(opts, ctx, body.api_key, body.client);
        const answer = await opts.topics.change(op, key.account_id, topic, body.recipients);
        ctx.body = { topic, changed: answer.changed, members: answer.members };
      });
    router.put(members, change('add'));
    router.delete(members, change('remove'));
    router.get(
      members,
      guardedRoute(opts, UNREACHABLE, async (ctx) => {
        const topic = topicOf(ctx);
        const q = new URLSearchParams(ctx.querystring);
        const key = await authorised(opts, ctx, q.get('api_key'), q.get('client') ?? undefined);
        const cursor = q.get('cursor');
        const parsed = cursor === null ? undefined : TopicRecipient.safeParse(cursor);
        if (parsed && !parsed.success) {
          throw new HeraldError(
            'invalid_field',
            'cursor must be the next_cursor of the previous page',
            { field: 'cursor' },
          );
        }
        const page = await opts.topics.list(
          key.account_id,
          topic,
          parsed?.data,
          TOPIC_MEMBERS_PAGE_MAX,
        );
        ctx.body = {
          topic,
          members: page.members,
          recipients: page.recipients,
          next_cursor: page.next_cursor,
        };
      }),
    );
    router.delete(
      `${base}/topics/:topic`,
      guardedRoute(opts, UNREACHABLE, async (ctx) => {
        const topic = topicOf(ctx);
        const q = new URLSearchParams(ctx.querystring);
        let apiKey: unknown = q.get('api_key');
        let client: unknown = q.get('client') ?? undefined;
        if (apiKey === null && ctx.get('Content-Length') && ctx.get('Content-Length') !== '0') {
          checkJsonRequest(
            ctx.get('Content-Type') || undefined,
            ctx.get('Content-Encoding') || undefined,
          );
          const body = jsonOf(await readJsonBody(ctx.req, opts.bodyLimitBytes));
          apiKey = body.api_key;
          client = body.client;
        }
        const key = await authorised(opts, ctx, apiKey, client);
        const answer = await opts.topics.delete(key.account_id, topic);
        if (!answer.deleted) throw noTopic(topic);
        ctx.body = { topic, deleted: true, members: answer.members };
      }),
    );
  }
}

/**
 * The methods a browser may preflight on `path` when it is a topic route, undefined otherwise: a
 * web dispatch key manages its topics from its own domain as it sends to them (issue 44).
 */
export function topicCorsMethods(path: string): string | undefined {
  for (const base of BASES) {
    if (!path.startsWith(`${base}/topics/`)) continue;
    const parts = path.slice(`${base}/topics/`.length).split('/');
    if (parts.length === 1 && parts[0]) return 'DELETE';
    if (parts.length === 2 && parts[0] && parts[1] === 'members') return 'GET, PUT, DELETE';
  }
  return undefined;
}

/**
 * The key, authorised as `/notify`'s: `client` (optional here, the key's own by default) must be
 * the key's, a web key's Origin its domain, its scope `dispatch`; a dashboard credential never.
 */
async function authorised(
  opts: TopicRouteOptions,
  ctx: Context,
  apiKey: unknown,
  client: unknown,
): Promise<VerifiedKey> {
  if (apiKey === null || apiKey === undefined || apiKey === '') {
    throw new HeraldError('missing_api_key', 'api_key is required: give your Herald API key', {
      field: 'api_key',
    });
  }
  if (typeof apiKey !== 'string') throw invalidApiKey();
  let checked: Client | undefined;
  if (client !== undefined) {
    const c = Client.safeParse(client);
    if (!c.success) {
      throw new HeraldError('invalid_client', 'client must be "web" or "mobile"', {
        field: 'client',
      });
    }
    checked = c.data;
  }
  // The verifier caches: the authorise step's own lookup of the key costs nothing more.
  const known = checked ?? (await opts.verifier.verify(apiKey)).client;
  return opts.authorise(
    { api_key: apiKey, client: known },
    { origin: ctx.get('Origin') || undefined },
  );
}

function parseMembersBody(raw: Uint8Array): TopicMembersBody & { client?: Client | undefined } {
  const body = jsonOf(raw);
  if (body.api_key === undefined) {
    throw new HeraldError('missing_api_key', 'api_key is required: give your Herald API key', {
      field: 'api_key',
    });
  }
  if (typeof body.api_key !== 'string') throw invalidApiKey();
  if (body.recipients === undefined) {
    throw new HeraldError(
      'missing_field',
      'recipients is required: an array of 1 to 10,000 recipient UUIDs',
      { field: 'recipients' },
    );
  }
  const parsed = TopicMembersBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'body';
    throw new HeraldError(
      field.startsWith('recipients') ? 'invalid_recipient' : 'invalid_field',
      `${field}: ${issue?.message ?? 'invalid value'}`,
      { field },
    );
  }
  const client = body.client === undefined ? undefined : (body.client as Client);
  return { ...parsed.data, client };
}

function jsonOf(raw: Uint8Array): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch {
    throw new HeraldError(
      'invalid_json',
      'The body is not valid JSON: send {"api_key", "recipients":[...]}',
      {
        field: 'body',
      },
    );
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HeraldError('invalid_json', 'The body must be a JSON object with api_key', {
      field: 'body',
    });
  }
  return body as Record<string, unknown>;
}

function topicOf(ctx: Context & { params?: Record<string, string> }): string {
  const parsed = TopicName.safeParse(ctx.params?.topic ?? '');
  if (!parsed.success) {
    throw new HeraldError('invalid_field', parsed.error.issues[0]?.message ?? 'bad topic', {
      field: 'topic',
    });
  }
  return parsed.data;
}

function noTopic(topic: string): HeraldError {
  return new HeraldError(
    'not_found',
    `This account has no topic "${topic}": add members with PUT /topics/${topic}/members first`,
    { field: 'topic' },
  );
}
