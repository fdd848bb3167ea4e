import type { FigureId } from '../config.js';

/** The systems issue 31's comparison measures, and the shape of one line of its table. */
export const SYSTEMS = [
  'herald',
  'centrifugoRedis',
  'centrifugoMemory',
  'socketIo',
  'rawWs',
  'designFloor',
] as const;
export type System = (typeof SYSTEMS)[number];

export const SYSTEM_NAMES: Record<System, string> = {
  herald: 'Herald',
  centrifugoRedis: 'Centrifugo, Redis engine',
  centrifugoMemory: 'Centrifugo, memory engine',
  socketIo: 'Socket.IO',
  rawWs: 'raw ws',
  designFloor: 'design floor',
};

/**
 * Which client a line's Herald sockets (or requests) were, as the Results table names it: issue
 * 42's point is that the drain and storm used to be measured only without a device, a client the
 * SDK does not ship by default.
 */
export const CLIENTS = {
  http: 'HTTP API',
  plain: 'ws, plain framing, no device',
  noDevice: 'herald.v1, batch=1, no device',
  sdk: 'SDK default (herald.v1, batch=1, device)',
  sdkInbox: 'SDK default (herald.v1, batch=1, device), inbox key',
} as const;

/** A target of issue 31: Herald ÷ Centrifugo-Redis against k, or Herald's own value against k. */
export interface PeerTarget {
  kind: 'ratio' | 'value';
  op: '>=' | '<=';
  k: number;
  /** As the issue states it, e.g. `≥ 1.0×` or `p99 ≤ 2 ms`. */
  text: string;
}

/** One line of the lead table: one figure, every system's runs, in the order. */
export interface PeerLine {
  /** The bench figure that measured it. */
  figure: FigureId;
  /** Sort key: the row of issue 31's table. */
  order: number;
  label: string;
  unit: string;
  /** Per system, its value in each run (run i measured beside run i of the others). */
  runs: Partial<Record<System, number[]>>;
  /** Herald's value split by server process (medians over the runs), for CPU lines. */
  split?: Record<string, number>;
  target?: PeerTarget;
  /** Why a system has no value (e.g. no offline store). */
  note?: string;
  /** Which client Herald's side used (CLIENTS). */
  client?: string;
}
