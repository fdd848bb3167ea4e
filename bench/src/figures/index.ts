import type { FigureId } from '../config.js';
import type { FigureResult } from '../report/results.js';
import { connectionRamps } from './connection-ramps.js';
import type { BenchContext } from './context.js';
import { drain } from './drain.js';
import { latency } from './latency.js';
import { offlineThroughput } from './offline-throughput.js';
import { onlineThroughput } from './online-throughput.js';
import { push } from './push.js';
import { pusherDoor } from './pusher.js';
import { topics } from './topics.js';
import { webhooks } from './webhooks.js';

export interface Figure {
  ids: FigureId[];
  title: string;
  run(ctx: BenchContext): Promise<FigureResult[]>;
}

/** The figures in the order they run (figures 5 and 6 share their connection ramps). */
export const FIGURES: Figure[] = [
  { ids: ['1'], title: 'dispatch-to-socket latency', run: async (ctx) => [await latency(ctx)] },
  {
    ids: ['2'],
    title: 'online dispatch throughput',
    run: async (ctx) => [await onlineThroughput(ctx)],
  },
  {
    ids: ['3'],
    title: 'offline dispatch throughput',
    run: async (ctx) => [await offlineThroughput(ctx)],
  },
  { ids: ['4'], title: 'drain on reconnect', run: async (ctx) => [await drain(ctx)] },
  {
    ids: ['5', '6'],
    title: 'memory per connection and connections per process',
    run: connectionRamps,
  },
  { ids: ['7'], title: 'delivery-status webhooks', run: async (ctx) => [await webhooks(ctx)] },
  { ids: ['8'], title: 'push fallback', run: async (ctx) => [await push(ctx)] },
  { ids: ['9'], title: 'Pusher door', run: async (ctx) => [await pusherDoor(ctx)] },
  { ids: ['10'], title: 'topics', run: async (ctx) => [await topics(ctx)] },
];
