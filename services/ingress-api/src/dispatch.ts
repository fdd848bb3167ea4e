import { randomUUID } from 'node:crypto';
import { authorizeKeyUse, type KeyVerifier, type Logger, NatsRequester } from '@herald/kit';
import { EventHeaders, HeraldError, type VerifiedKey } from '@herald/proto';
import { headers, type JetStreamClient, type MsgHdrs, type NatsConnection } from 'nats';
import type { IngressConfig } from './config.js';
import { IdempotencyStore, validateIdempotencyKey } from './idempotency.js';
import { pushLive } from './live-push.js';
import { type IngressMetrics, outcomeOf, type Transport } from './metrics.js';
import { enqueue } from './offline-queue.js';
import { parseDispatchBody } from './parse-request.js';
import type { DispatchRateLimiter } from './rate-limiter.js';
import type { RecipientDepth } from './recipient-depth.js';
import { type DispatchResult, fromError, internal, queued, sent } from './results.js';

export interface DispatchInput {
  /** The raw JSON text of the body, as received. */
  body: string;
  /** The Origin header, if any. */
  origin?: string | undefined;
  /** The Idempotency-Key header, if any. */
  idempotencyKey?: string | undefined;
  transport: Transport;
  /** The account named by a NATS dispatch subject; the key must belong to it. */
  subjectAccount?: string | undefined;
}

export interface DispatcherDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  verifier: KeyVerifier;
  config: IngressConfig;
  metrics: IngressMetrics;
  logger: Logger;
  /** The per-key dispatch rate limit (403 rate_limited); none when absent. */
  rateLimiter?: DispatchRateLimiter;
  /** The plan's per-recipient queue cap (507 queue_full); only the stream's ceiling when absent. */
  recipientDepth?: RecipientDepth;
  /** Epoch ms; injectable for tests. Default Date.now. */
  now?: () => number;
}

export interface Dispatcher {
  /** Never throws: every outcome, a bug included, is a status and a body. */
  dispatch(input: DispatchInput): Promise<DispatchResult>;
  /**
   * The answer to a request its transport refused before dispatching (wrong Content-Type, body
   * too large), counted in the same metrics as every other dispatch.
   */
  refuse(transport: Transport, err: HeraldError): DispatchResult;
}

interface Target {
  key: VerifiedKey;
  account: string;
  recipient: string;
  payload: Uint8Array;
}

/**
 * The one dispatch path behind HTTP and NATS: validate, verify the key, push live, else queue.
 * A 200 means an edge confirmed a socket write; a 202 means JetStream acked the store; anything
 * that confirms neither is an error status.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { nc, js, verifier, config, metrics, logger } = deps;
  const now = deps.now ?? Date.now;
  const requester = new NatsRequester(nc);
  const idempotency = new IdempotencyStore(js, {
    staleAfterMs: config.LIVE_TIMEOUT_MS + config.PUBLISH_TIMEOUT_MS,
    now,
  });

  function record(transport: Transport, result: DispatchResult, started: number): DispatchResult {
    const outcome = outcomeOf(result.status);
    metrics.dispatches.inc({ transport, outcome });
    metrics.duration.observe({ transport, outcome }, (performance.now() - started) / 1000);
    if (outcome === 'refused' && 'error' in result.body)
      metrics.refused.inc({ code: result.body.error.code });
    return result;
  }

  function refuse(transport: Transport, err: HeraldError): DispatchResult {
    return record(transport, fromError(err), performance.now());
  }

  async function dispatch(input: DispatchInput): Promise<DispatchResult> {
    const started = performance.now();
    let result: DispatchResult;
    try {
      result = await accept(input);
    } catch (err) {
      if (err instanceof HeraldError) {
        result = fromError(err);
      } else {
        const requestId = randomUUID();
        logger.error(
          { err, requestId, transport: input.transport },
          'dispatch failed with an internal error',
        );
        result = internal(requestId);
      }
    }
    return record(input.transport, result, started);
  }

  async function accept(input: DispatchInput): Promise<DispatchResult> {
    const { request, payload } = parseDispatchBody(input.body, config.PAYLOAD_LIMIT_BYTES);
    const idempotencyKey = validateIdempotencyKey(input.idempotencyKey);
    const key = await verifier.verify(request.api_key);
    if (input.subjectAccount !== undefined && input.subjectAccount !== key.account_id) {
      throw new HeraldError(
        'account_mismatch',
        `This api_key belongs to another account than the dispatch subject names: publish to the subject of account ${key.account_id}`,
        { field: 'api_key' },
      );
    }
    authorizeKeyUse(key, { client: request.client, origin: input.origin, now: now() });
    // After every check of the request, so a refused request spends no token.
    await deps.rateLimiter?.take(key);
    const target: Target = {
      key,
      account: key.account_id,
      recipient: request.recipient,
      payload,
    };
    if (idempotencyKey === undefined) {
      const id = randomUUID();
      return deliver(target, id, id);
    }
    return deliverOnce(target, idempotencyKey);
  }

  async function deliverOnce(target: Target, idempotencyKey: string): Promise<DispatchResult> {
    let claim: Awaited<ReturnType<IdempotencyStore['claim']>>;
    try {
      claim = await idempotency.claim(target.account, idempotencyKey, randomUUID());
    } catch (err) {
      logger.warn({ err: String(err) }, 'idempotency store unavailable');
      throw new HeraldError(
        'unavailable',
        'The idempotency store is unavailable: retry shortly (the event was neither sent nor stored)',
        { cause: err },
      );
    }
    if (claim.kind === 'replay') return claim.result;
    if (claim.kind === 'busy') {
      throw new HeraldError(
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still being processed: retry after the Retry-After delay to get its result',
        { field: 'Idempotency-Key', retryAfter: 1 },
      );
    }
    let result: DispatchResult;
    try {
      result = await deliver(target, claim.id, `${target.account}:${idempotencyKey}`);
    } catch (err) {
      // A bug mid-dispatch: mark the claim failed so the caller's retry may dispatch again.
      await idempotency.abandon(claim).catch(() => undefined);
      throw err;
    }
    try {
      await idempotency.finish(claim, result);
    } catch (err) {
      // The dispatch happened; a retry within the window is still caught by JetStream's dedup (queued).
      logger.warn({ err: String(err), id: claim.id }, 'could not record an idempotent result');
    }
    return result;
  }

  async function deliver(target: Target, id: string, msgId: string): Promise<DispatchResult> {
    const ts = now();
    const live = await pushLive(
      requester,
      { ...target, headers: eventHeaders(id, ts) },
      config.LIVE_TIMEOUT_MS,
    );
    if (live.kind === 'sent') return sent(id);
    if (live.kind !== 'offline') {
      logger.warn(
        {
          id,
          account: target.account,
          live: live.kind,
          reason: 'reason' in live ? live.reason : undefined,
        },
        'live push unconfirmed: queueing',
      );
    }
    const full = await planQueueFull(target);
    if (full) return full;
    const stored = await enqueue(
      nc,
      requester,
      { ...target, id, msgId, headers: eventHeaders(id, ts) },
      config.PUBLISH_TIMEOUT_MS,
    );
    switch (stored.kind) {
      case 'stored':
        metrics.queuePublishes.inc({ result: stored.duplicate ? 'duplicate' : 'stored' });
        if (!stored.duplicate) deps.recipientDepth?.stored(target.account, target.recipient);
        return queued(id);
      case 'recipient_full':
        metrics.queuePublishes.inc({ result: 'full' });
        return errorResult(
          'queue_full',
          `This recipient already has ${config.QUEUE_MAX_PER_RECIPIENT} queued events (QUEUE_MAX_PER_RECIPIENT): nothing was stored and nothing older was dropped; retry once the recipient has connected and received them`,
          { field: 'recipient' },
        );
      case 'store_full':
        metrics.queuePublishes.inc({ result: 'full' });
        logger.error({ id, description: stored.description }, 'offline queue store is full');
        return errorResult(
          'queue_full',
          'The offline queue is full (stream storage limit): nothing was stored; retry later or ask the operator to raise QUEUE_MAX_BYTES',
        );
      case 'error':
        metrics.queuePublishes.inc({ result: 'error' });
        logger.error(
          { id, account: target.account, reason: stored.reason },
          'could neither push nor store an event',
        );
        return errorResult(
          'unavailable',
          live.kind === 'offline'
            ? 'The recipient is offline and the offline queue is unavailable: retry shortly'
            : 'No edge confirmed the live push and the offline queue is unavailable: retry shortly',
        );
    }
  }

  /**
   * The plan's cap on a recipient's undelivered events, below the stream's own per-subject ceiling
   * (QUEUE_MAX_PER_RECIPIENT, which JetStream enforces by refusing the publish). A refusal names the
   * depth; nothing older is ever dropped. When the depth cannot be read, the publish decides.
   */
  async function planQueueFull(target: Target): Promise<DispatchResult | undefined> {
    const cap = target.key.limits.queue_per_recipient;
    if (!deps.recipientDepth || cap >= config.QUEUE_MAX_PER_RECIPIENT) return undefined;
    let room: Awaited<ReturnType<RecipientDepth['room']>>;
    try {
      room = await deps.recipientDepth.room(target.account, target.recipient, cap);
    } catch (err) {
      logger.debug({ err: String(err) }, 'could not read a recipient queue depth: publishing');
      return undefined;
    }
    if (!room.full) return undefined;
    metrics.queuePublishes.inc({ result: 'full' });
    const whose =
      target.key.kind === 'test' ? 'Test keys allow' : `the ${target.key.plan} plan allows`;
    return errorResult(
      'queue_full',
      `This recipient already has ${room.depth} undelivered events queued and ${whose} ${cap} per recipient: nothing was stored and nothing older was dropped; retry once the recipient has connected and received them, or move to a bigger plan`,
      { field: 'recipient' },
    );
  }

  return { dispatch, refuse };
}

function errorResult(...args: ConstructorParameters<typeof HeraldError>): DispatchResult {
  return fromError(new HeraldError(...args));
}

function eventHeaders(id: string, ts: number): MsgHdrs {
  const h = headers();
  h.set(EventHeaders.id, id);
  h.set(EventHeaders.ts, String(ts));
  return h;
}
