// Compile-time only (nothing imports this file): the SDK states its wire types by hand so its
// declarations carry no zod; these lines fail the typecheck if proto/ and the SDK drift apart.
import type { ErrorFrame, EventFrame, Client as ProtoClient } from '@herald/proto';
import type { ServerFrame } from './frames.js';
import type { Client, HeraldEvent } from './types.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

export type ClientMatches = Assert<Same<Client, ProtoClient>>;
export type EventMatches = Assert<Same<Omit<EventFrame, 'type'>, HeraldEvent>>;
export type FramesMatch = Assert<Same<Extract<ServerFrame, { type: 'event' }>, EventFrame>>;
export type ErrorFrameFits = Assert<
  ErrorFrame extends Extract<ServerFrame, { type: 'error' }> ? true : false
>;
