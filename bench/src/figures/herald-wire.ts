import { CONNECT_PATH, subjects } from '@herald/proto';
import type { HeraldStack } from '../env/herald-stack.js';

/**
 * How the load generator speaks to Herald, in one place: the notify body with the payload's text
 * inserted verbatim, and the connect URL of a recipient's socket (plain or herald.v1 framing is
 * chosen by the subprotocol the fleet offers).
 */
export function notifyBody(stack: HeraldStack, recipient: string, payloadJson: string): string {
  return `{"recipient":"${recipient}","payload":${payloadJson},"api_key":"${stack.apiKey}","client":"mobile"}`;
}

export function connectUrl(stack: HeraldStack, recipient: string): string {
  const q = new URLSearchParams({ api_key: stack.apiKey, recipient, client: 'mobile' });
  return `${stack.wsUrl}${CONNECT_PATH}?${q}`;
}

export function dispatchSubject(stack: HeraldStack): string {
  return subjects.dispatch(stack.account);
}

/** The baselines' push body: the same payload text, addressed the same way, without a key. */
export function pushBody(recipient: string, payloadJson: string): string {
  return `{"recipient":"${recipient}","payload":${payloadJson}}`;
}

export function rawWsUrl(origin: string, recipient: string): string {
  return `${origin.replace(/^https:/, 'wss:')}/ws/connect?recipient=${recipient}`;
}
