import https from 'node:https';
import { bodyMd5, requestSignature } from '@herald/access';
import { type HttpResult, type PusherAppObject, post, type Stack } from '@herald/testkit';
import type { NatsConnection } from 'nats';
import Pusher from 'pusher';

/** The stock `pusher` server library (5.3.4) pointed at the stack's ingress, trusting its CA. */
export function pusherClient(stack: Stack, app: PusherAppObject): Pusher {
  return new Pusher({
    appId: app.app_id,
    key: app.key,
    secret: app.secret,
    host: '127.0.0.1',
    port: String(stack.ports['ingress-api']),
    useTLS: true,
    agent: new https.Agent({ ca: stack.ca }),
  });
}

export interface SignOptions {
  /** auth_timestamp: default now. */
  timestamp?: number;
  /** body_md5 as sent: default the body's own; null leaves it out. */
  md5?: string | null;
  /** The body actually sent, when it differs from the one signed (a tampered body). */
  sentBody?: string;
  /** auth_key as sent: default the app's. */
  key?: string;
  /** The secret it is signed with: default the app's. */
  secret?: string;
}

/**
 * A POST signed by hand with lib/access's `requestSignature`, as the `pusher` library signs,
 * for what the library refuses to send (101 channels) or to break one part of the signature.
 */
export function signedPost(
  stack: Stack,
  app: Pick<PusherAppObject, 'app_id' | 'key' | 'secret'>,
  subPath: string,
  body: string,
  o: SignOptions = {},
): Promise<HttpResult> {
  const path = `/apps/${app.app_id}${subPath}`;
  const params: Record<string, string> = {
    auth_key: o.key ?? app.key,
    auth_timestamp: String(o.timestamp ?? Math.floor(Date.now() / 1000)),
    auth_version: '1.0',
  };
  const md5 = o.md5 === undefined ? bodyMd5(body) : o.md5;
  if (md5 !== null) params.body_md5 = md5;
  params.auth_signature = requestSignature(o.secret ?? app.secret, 'POST', path, params);
  const query = new URLSearchParams(params).toString();
  return post(stack.baseUrl, stack.ca, undefined, {
    path: `${path}?${query}`,
    raw: o.sentBody ?? body,
  });
}

/** Every message that arrives on `subject` (a core subscription), decoded as JSON. */
export async function collect(
  nc: NatsConnection,
  subject: string,
): Promise<{ messages: unknown[]; stop(): void }> {
  const messages: unknown[] = [];
  const sub = nc.subscribe(subject, {
    callback: (err, msg) => {
      if (!err) messages.push(JSON.parse(new TextDecoder().decode(msg.data)));
    },
  });
  await nc.flush();
  return { messages, stop: () => sub.unsubscribe() };
}

/** A RequestError's status and body text, from a promise the `pusher` library rejected. */
export async function refusedBy(
  p: Promise<unknown>,
): Promise<{ status: number | undefined; body: string | undefined }> {
  const err = await p.then(
    () => {
      throw new Error('expected the pusher library to reject');
    },
    (e: unknown) => e as { status?: number; body?: string },
  );
  return { status: err.status, body: err.body };
}
