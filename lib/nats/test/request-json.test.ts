import { errorReply, HeraldError, LiveBatchReply, StatusTrimReply } from '@herald/proto';
import { connect, type Msg } from 'nats';
import { describe, expect, it } from 'vitest';
import type { ReplySchema } from '../src/json-answer.js';
import { NatsRequester } from '../src/nats-requester.js';
import { useCorePair } from './core-pair.js';

const pair = useCorePair();

/** Answers every request on `subject` with `answer(request)`, from the peer connection. */
async function responder(subject: string, answer: (msg: Msg) => string | undefined) {
  const sub = pair.peer.subscribe(subject, {
    callback: (_err, msg) => {
      const text = answer(msg);
      if (text !== undefined) msg.respond(text);
    },
  });
  await pair.peer.flush();
  return sub;
}

/** The HeraldError a promise rejects with (fails the test when it resolves or throws another). */
async function refusal(p: Promise<unknown>): Promise<HeraldError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HeraldError);
  return err as HeraldError;
}

const TRIMMED = { v: 1, ok: true, events_deleted: 2, rollups_deleted: 1 };

describe('NatsRequester.requestJson (real nats-server)', () => {
  it("resolves with the reply as the schema reads it, sending the body's JSON or its bytes", async () => {
    const bodies: string[] = [];
    const sub = await responder('rj.data', (msg) => {
      bodies.push(new TextDecoder().decode(msg.data));
      return JSON.stringify(TRIMMED);
    });
    const requester = new NatsRequester(pair.nc);
    expect(await requester.requestJson('rj.data', { v: 1 }, StatusTrimReply, 2000)).toEqual(
      TRIMMED,
    );
    const bytes = new TextEncoder().encode('{"v":1,"raw":true}');
    expect(await requester.requestJson('rj.data', bytes, StatusTrimReply, 2000)).toEqual(TRIMMED);
    expect(bodies).toEqual(['{"v":1}', '{"v":1,"raw":true}']);
    sub.unsubscribe();
  });

  it('reads a reply schema without an error variant, and a hand-written one', async () => {
    const sub = await responder('rj.plain', () => '{"v":1,"sockets":[1,0,2]}');
    const requester = new NatsRequester(pair.nc);
    const reply = await requester.requestJson('rj.plain', { v: 1 }, LiveBatchReply, 2000);
    expect(reply.sockets).toEqual([1, 0, 2]);
    const sockets: ReplySchema<number> = {
      safeParse: (v) => {
        const n = (v as { sockets?: number[] }).sockets?.length;
        return n === undefined ? { success: false } : { success: true, data: n };
      },
    };
    expect(await requester.requestJson('rj.plain', { v: 1 }, sockets, 2000)).toBe(3);
    sub.unsubscribe();
  });

  it('rejects with the error reply rebuilt: its code, message and field cross NATS', async () => {
    const refused = new HeraldError('invalid_field', 'cursor must be a `next` value', {
      field: 'before',
    });
    const sub = await responder('rj.refused', () => JSON.stringify(errorReply(refused)));
    const requester = new NatsRequester(pair.nc);
    const err = await refusal(
      requester.requestJson('rj.refused', { v: 1 }, StatusTrimReply, 2000, {
        message: 'the caller’s no-answer words',
        retryAfter: 1,
      }),
    );
    expect(err.toBody()).toEqual(refused.toBody());
    expect(err.status).toBe(400);
    expect(err.retryAfter).toBeUndefined();
    sub.unsubscribe();
  });

  it('reads no responders, a timeout, a closed connection, a malformed reply and a peer that cannot answer as one code: unavailable', async () => {
    const requester = new NatsRequester(pair.nc);
    const noAnswer = { message: 'The store did not answer: retry shortly', retryAfter: 1 };

    const nobody = await refusal(requester.requestJson('rj.nobody', {}, StatusTrimReply, 2000));
    expect(nobody).toMatchObject({ code: 'unavailable', status: 503, retryAfter: undefined });
    expect(nobody.message).toBe('no answer on rj.nobody: nobody subscribes');

    const silent = await responder('rj.silent', () => undefined);
    const startedAt = Date.now();
    const late = await refusal(
      requester.requestJson('rj.silent', {}, StatusTrimReply, 150, noAnswer),
    );
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(140);
    expect(late).toMatchObject({ code: 'unavailable', ...noAnswer });
    expect(late.cause).toBe('no reply within 150 ms');
    silent.unsubscribe();

    const closed = await connect(pair.connectOptions());
    await closed.close();
    const unsent = await refusal(
      new NatsRequester(closed).requestJson('rj.nobody', {}, StatusTrimReply, 2000, noAnswer),
    );
    expect(unsent).toMatchObject({ code: 'unavailable', message: noAnswer.message });

    const replies = ['not json', '{"v":1,"ok":true}', '{"v":1,"ok":false,"error":{"code":"nope"}}'];
    for (const text of replies) {
      const sub = await responder('rj.malformed', () => text);
      const err = await refusal(
        requester.requestJson('rj.malformed', {}, StatusTrimReply, 2000, noAnswer),
      );
      expect(err).toMatchObject({ code: 'unavailable', message: noAnswer.message });
      sub.unsubscribe();
    }

    for (const code of ['unavailable', 'internal'] as const) {
      const failing = new HeraldError(code, `the peer's store is down (${code})`);
      const sub = await responder('rj.failing', () => JSON.stringify(errorReply(failing)));
      const err = await refusal(
        requester.requestJson('rj.failing', {}, StatusTrimReply, 2000, noAnswer),
      );
      expect(err).toMatchObject({ code: 'unavailable', ...noAnswer });
      expect((err.cause as HeraldError).toBody()).toEqual(failing.toBody());
      sub.unsubscribe();
    }
  });

  it('rejects a body that is not JSON without sending anything', async () => {
    const requester = new NatsRequester(pair.nc);
    const before = pair.nc.stats().outMsgs;
    await expect(
      requester.requestJson('rj.data', { n: 1n }, StatusTrimReply, 2000),
    ).rejects.toBeInstanceOf(TypeError);
    expect(pair.nc.stats().outMsgs).toBe(before);
  });
});
