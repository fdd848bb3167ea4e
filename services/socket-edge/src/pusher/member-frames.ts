import { HERALD_PUSHER_EVENT, PusherEnvelope } from '@herald/proto';
import type { EventFrames } from '../socket/framing.js';

/** A recipient's event as Pusher sees it: its event name, the envelope's channel if any, its data. */
interface PusherView {
  event: string;
  channel: string | undefined;
  /** The data string, with `"herald_id":"<id>",` spliced in when it is a JSON object. */
  data: string;
  /** The first frame built, and its channel: most events go out on one channel only. */
  first: { channel: string; frame: MemberFrame } | undefined;
  /** Frames built on other channels, by channel. */
  more: Map<string, MemberFrame> | undefined;
}

/** A frame's bytes as ws sends them (encoded once, here), and their count. */
export interface MemberFrame {
  data: Buffer;
  bytes: number;
}

/** Each event's view, built once however many Pusher sockets it goes to. */
const views = new WeakMap<EventFrames, PusherView>();
const decoder = new TextDecoder();

/**
 * The Pusher frame of a recipient's event (live, drained or caught up) on `channel`:
 * `{"event","channel","data"}`. A payload that is a {@link PusherEnvelope} (what the Pusher HTTP
 * API stores) goes out as its event and data; any other payload (a `/notify` of the recipient) as
 * `herald:event` with the payload's JSON text as data. When the data is a JSON object, the Herald
 * id is spliced in first (`{"herald_id":"<id>",…`, the rest byte for byte), so the app can drop a
 * redelivered copy.
 */
export function memberFrame(
  frames: EventFrames,
  channelOf: (envelopeChannel: string | undefined) => string,
): MemberFrame {
  let view = views.get(frames);
  if (!view) {
    view = viewOf(frames);
    views.set(frames, view);
  }
  const channel = channelOf(view.channel);
  const { first } = view;
  if (first?.channel === channel) return first.frame;
  let frame = view.more?.get(channel);
  if (!frame) {
    // Encoded here, once: ws would encode a string again for every send.
    const data = Buffer.from(JSON.stringify({ event: view.event, channel, data: view.data }));
    frame = { data, bytes: data.byteLength };
    if (!first) view.first = { channel, frame };
    else {
      view.more ??= new Map();
      view.more.set(channel, frame);
    }
  }
  return frame;
}

function viewOf(frames: EventFrames): PusherView {
  const text = decoder.decode(frames.event.data);
  const envelope = envelopeOf(text);
  const id = frames.event.id;
  return envelope
    ? {
        event: envelope.event,
        channel: envelope.channel,
        data: withHeraldId(envelope.data, id),
        first: undefined,
        more: undefined,
      }
    : {
        event: HERALD_PUSHER_EVENT,
        channel: undefined,
        data: withHeraldId(text, id),
        first: undefined,
        more: undefined,
      };
}

function envelopeOf(text: string): PusherEnvelope | undefined {
  // Only an object can be one: most payloads are not read twice.
  if (!text.includes('"event"')) return undefined;
  try {
    const parsed = PusherEnvelope.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `data` with `"herald_id":"<id>"` as its first member when it is a JSON object (the rest byte
 * for byte; no comma before an empty object's `}`); any other data as it is.
 */
export function withHeraldId(data: string, id: string): string {
  const open = data.search(/\S/);
  if (open < 0 || data[open] !== '{') return data;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return data;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return data;
  const rest = data.slice(open + 1);
  const member = `"herald_id":${JSON.stringify(id)}`;
  const empty = rest.trimStart().startsWith('}');
  return `${data.slice(0, open + 1)}${member}${empty ? '' : ','}${rest}`;
}
