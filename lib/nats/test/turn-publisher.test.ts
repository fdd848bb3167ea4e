import { connect, type Msg } from 'nats';
import { describe, expect, it } from 'vitest';
import { NatsRequester } from '../src/nats-requester.js';
import { TurnPublisher } from '../src/turn-publisher.js';
import { useCorePair } from './core-pair.js';

const pair = useCorePair();

const text = (m: Msg) => new TextDecoder().decode(m.data);
const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Collects what arrives on `subject` until `count` messages came. */
async function collect(subject: string, count: number) {
  const got: string[] = [];
  const sub = pair.peer.subscribe(subject, { max: count });
  await pair.peer.flush();
  const done = (async () => {
    for await (const m of sub) got.push(text(m));
    return got;
  })();
  return { done };
}

describe('TurnPublisher (real nats-server)', () => {
  it('hands a turn’s publishes to the connection at the turn’s end, in call order', async () => {
    const publisher = new TurnPublisher(pair.nc);
    const { done } = await collect('turn.order', 5);
    const before = pair.nc.stats().outMsgs;
    for (let i = 0; i < 5; i++) publisher.publish('turn.order', `m${i}`);
    // Nothing has left yet: the turn is not over.
    expect(pair.nc.stats().outMsgs).toBe(before);
    await turnEnd();
    expect(pair.nc.stats().outMsgs).toBe(before + 5);
    expect(await done).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
  });

  it('keeps the call order across turns', async () => {
    const publisher = new TurnPublisher(pair.nc);
    const { done } = await collect('turn.turns', 3);
    publisher.publish('turn.turns', 'a');
    await turnEnd();
    publisher.publish('turn.turns', 'b');
    publisher.publish('turn.turns', 'c');
    expect(await done).toEqual(['a', 'b', 'c']);
  });

  it('tells onError when the connection refuses the publish, and drops it silently without one', async () => {
    const closed = await connect(pair.connectOptions());
    await closed.close();
    const publisher = new TurnPublisher(closed);
    const errors: unknown[] = [];
    publisher.publish('turn.closed', 'x', undefined, (err) => errors.push(err));
    publisher.publish('turn.closed', 'y');
    await turnEnd();
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/CLOSED/i);
  });
});

describe('NatsRequester over a TurnPublisher (real nats-server)', () => {
  it('gets the reply, the no-responders status and a closed connection as plain outcomes', async () => {
    const sub = pair.peer.subscribe('turn.echo', {
      callback: (_err, m) => m.respond(new TextEncoder().encode(`echo ${text(m)}`)),
    });
    await pair.peer.flush();
    const requester = new NatsRequester(pair.nc, { publisher: new TurnPublisher(pair.nc) });
    const body = (s: string) => new TextEncoder().encode(s);
    const outcomes = await Promise.all([
      requester.request('turn.echo', body('1'), undefined, 5000),
      requester.request('turn.echo', body('2'), undefined, 5000),
      requester.request('turn.nobody', body('3'), undefined, 5000),
    ]);
    expect(outcomes.map((o) => (o.kind === 'reply' ? text(o.msg) : o.kind))).toEqual([
      'echo 1',
      'echo 2',
      'no_responders',
    ]);
    sub.unsubscribe();

    const closed = await connect(pair.connectOptions());
    const onClosed = new NatsRequester(closed, { publisher: new TurnPublisher(closed) });
    // The reply subscription exists before the close, so the refusal comes from the publish.
    const first = onClosed.request('turn.nobody', body('x'), undefined, 5000);
    expect((await first).kind).toBe('no_responders');
    await closed.close();
    const refused = await onClosed.request('turn.nobody', body('y'), undefined, 5000);
    expect(refused.kind).toBe('error');
  });
});
