// Compile-time only (nothing imports this file): the SDK states its wire types by hand so its
// declarations carry no zod; these lines fail the typecheck if proto/ and the SDK drift apart.
import type {
  ErrorFrame,
  EventFrame,
  EventsFrame,
  HistoryFrame,
  HistoryRequestFrame,
  InboxFrame,
  Client as ProtoClient,
  InboxEvent as ProtoInboxEvent,
} from '@herald/proto';
import type { ServerFrame } from './frames.js';
import type { Client, HeraldEvent, HistoryOptions, HistoryPage, InboxEvent } from './types.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

export type ClientMatches = Assert<Same<Client, ProtoClient>>;
export type EventMatches = Assert<Same<Omit<EventFrame, 'type'>, HeraldEvent>>;
export type FramesMatch = Assert<Same<Extract<ServerFrame, { type: 'event' }>, EventFrame>>;
export type EventsFrameMatches = Assert<
  Same<Extract<ServerFrame, { type: 'events' }>, EventsFrame>
>;
export type ErrorFrameFits = Assert<
  ErrorFrame extends Extract<ServerFrame, { type: 'error' }> ? true : false
>;
export type ErrorRefMatches = Assert<
  Same<Extract<ServerFrame, { type: 'error' }>['ref'], ErrorFrame['ref']>
>;
export type InboxFrameMatches = Assert<Same<Extract<ServerFrame, { type: 'inbox' }>, InboxFrame>>;
export type HistoryFrameMatches = Assert<
  Same<Extract<ServerFrame, { type: 'history' }>, HistoryFrame>
>;
export type InboxEventMatches = Assert<Same<InboxEvent, ProtoInboxEvent>>;
export type HistoryPageMatches = Assert<Same<HistoryPage, Omit<HistoryFrame, 'type'>>>;
export type HistoryOptionsFit = Assert<
  Same<Required<HistoryOptions>, Omit<HistoryRequestFrame, 'type'>>
>;
