import { EventEmitter } from 'node:events';
import { createLogger } from '@herald/kit';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { createEdgeMetrics } from '../metrics.js';
import type { RecipientRegistry } from '../session/connection-registry.js';
import type { ChannelFanout } from './channel-fanout.js';
import type { PusherContext } from './pusher-context.js';
import { PusherSocket } from './pusher-socket.js';

/** A WebSocket as far as PusherSocket uses it: what it sent, how it was closed. */
class FakeWs extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  sent: string[] = [];
  closedWith: number | undefined;
  pings = 0;
  terminated = false;
  send(frame: string) {
    this.sent.push(frame);
  }
  close(code: number) {
    this.closedWith = code;
    this.readyState = 2;
  }
  ping() {
    this.pings++;
  }
  terminate() {
    this.terminated = true;
    this.readyState = 3;
  }
}

function socketOf(ws: FakeWs, activityTimeoutS = 120): PusherSocket {
  const ctx: PusherContext = {
    sessions: {} as RecipientRegistry,
    fanout: {} as ChannelFanout,
    metrics: createEdgeMetrics(new Registry()),
    logger: createLogger('socket-edge', 'silent'),
    proof: { maxEvents: 10, maxBytes: 10_000, liveProofTimeoutMs: 1000 },
    feedFor: () => {
      throw new Error('no member here');
    },
    activityTimeoutS,
    signinTimeoutMs: 30_000,
    maxChannels: 100,
    closing: () => false,
  };
  const socket = new PusherSocket(ctx, {
    ws: ws as unknown as WebSocket,
    socketId: '1.2',
    grant: {
      app: {
        app_id: '1',
        key: '0123456789abcdef0123',
        secret: 's',
        account_id: 'a',
        key_id: 'k',
        user_ids: 'any',
        user_channel: null,
      },
      key: {
        id: 'k',
        account_id: 'a',
        kind: 'live',
        client: 'mobile',
        domain: null,
        expires_at: null,
        plan: 'free',
        plan_until: null,
        limits: { connections: 1, dispatch_rate: 1, dispatch_burst: 1, queue_per_recipient: 1 },
      },
    },
    origin: undefined,
    hold: { release() {} },
    onClosed: () => {},
    onFrame: () => {},
  });
  socket.start();
  return socket;
}

describe('PusherSocket heartbeat', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('pings, and terminates a socket that left the last ping unanswered', () => {
    const ws = new FakeWs();
    const socket = socketOf(ws);
    socket.heartbeat();
    expect(ws.pings).toBe(1);
    ws.emit('pong');
    socket.heartbeat();
    expect(ws.pings).toBe(2);
    socket.heartbeat();
    expect(ws.terminated).toBe(true);
  });

  it('closes with pusher:error 4201 once nothing was heard for activity_timeout + 30 s', () => {
    const ws = new FakeWs();
    const socket = socketOf(ws, 10);
    vi.setSystemTime(1_000_000 + 40_000);
    socket.heartbeat();
    expect(ws.closedWith).toBeUndefined();
    // A frame from the client is activity.
    ws.emit('message', Buffer.from('{}'), false);
    vi.setSystemTime(1_000_000 + 80_000);
    ws.emit('pong');
    socket.heartbeat();
    expect(ws.closedWith).toBeUndefined();
    vi.setSystemTime(1_000_000 + 120_001);
    socket.heartbeat();
    expect(ws.closedWith).toBe(4201);
    expect(JSON.parse(ws.sent.at(-1) as string)).toMatchObject({
      event: 'pusher:error',
      data: { code: 4201 },
    });
  });
});
