import { describe, expect, it } from 'vitest';
import { FakeClock } from '../test/support/fake-clock.js';
import { DEFAULT_SCHEDULE } from './config.js';
import { Scheduler } from './scheduler.js';

const iso = (d: Date | undefined) => d?.toISOString() ?? 'none';

describe('Scheduler', () => {
  it('fires on the default weekly cron (Sunday 03:00 UTC), week after week, without sleeping', async () => {
    // Wednesday 2026-01-07 12:00 UTC.
    const clock = new FakeClock(new Date('2026-01-07T12:00:00Z'));
    const fired: string[] = [];
    const s = new Scheduler(DEFAULT_SCHEDULE, async (slot) => void fired.push(iso(slot)), {
      clock,
    });
    s.start();
    expect(iso(s.nextRun)).toBe('2026-01-11T03:00:00.000Z');

    await clock.advanceTo(new Date('2026-01-11T02:59:59Z'));
    expect(fired).toEqual([]);
    await clock.advanceTo(new Date('2026-01-11T03:00:00Z'));
    expect(fired).toEqual(['2026-01-11T03:00:00.000Z']);
    expect(iso(s.nextRun)).toBe('2026-01-18T03:00:00.000Z');

    await clock.advanceTo(new Date('2026-01-25T04:00:00Z'));
    expect(fired).toEqual([
      '2026-01-11T03:00:00.000Z',
      '2026-01-18T03:00:00.000Z',
      '2026-01-25T03:00:00.000Z',
    ]);
    await s.stop();
    expect(s.nextRun).toBeUndefined();
  });

  it('chains long waits into timers no longer than maxTimerMs', async () => {
    const clock = new FakeClock(new Date('2026-01-07T12:00:00Z'));
    let runs = 0;
    const s = new Scheduler('0 0 1 * *', async () => void runs++, { clock, maxTimerMs: 3_600_000 });
    s.start();
    await clock.advanceTo(new Date('2026-02-01T00:00:00Z'));
    expect(runs).toBe(1);
    expect(Math.max(...clock.delays)).toBeLessThanOrEqual(3_600_000);
    await s.stop();
  });

  it('skips a firing while the previous run is still going, and reports it', async () => {
    const clock = new FakeClock(new Date('2026-01-01T00:00:30Z'));
    let release!: () => void;
    const overlaps: string[] = [];
    let starts = 0;
    const s = new Scheduler(
      '* * * * *',
      () => {
        starts++;
        return new Promise<void>((r) => {
          release = r;
        });
      },
      { clock, onOverlap: (slot) => overlaps.push(iso(slot)) },
    );
    s.start();
    await clock.advanceTo(new Date('2026-01-01T00:01:00Z'));
    await clock.advanceTo(new Date('2026-01-01T00:02:00Z'));
    expect(starts).toBe(1);
    expect(overlaps).toEqual(['2026-01-01T00:02:00.000Z']);
    release();
    await clock.advanceTo(new Date('2026-01-01T00:03:00Z'));
    expect(starts).toBe(2);
    release();
    await s.stop();
  });

  it('stop() waits for the run in progress and cancels the timer', async () => {
    const clock = new FakeClock(new Date('2026-01-01T00:00:30Z'));
    let finished = false;
    let release!: () => void;
    const s = new Scheduler(
      '* * * * *',
      () =>
        new Promise<void>((r) => {
          release = () => {
            finished = true;
            r();
          };
        }),
      { clock },
    );
    s.start();
    await clock.advanceTo(new Date('2026-01-01T00:01:00Z'));
    const stopped = s.stop();
    release();
    await stopped;
    expect(finished).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it('keeps firing after a run fails, passing the error on', async () => {
    const clock = new FakeClock(new Date('2026-01-01T00:00:30Z'));
    const errors: unknown[] = [];
    let runs = 0;
    const s = new Scheduler(
      '* * * * *',
      async () => {
        runs++;
        throw new Error('boom');
      },
      { clock, onError: (e) => errors.push(e) },
    );
    s.start();
    await clock.advanceTo(new Date('2026-01-01T00:02:00Z'));
    expect(runs).toBe(2);
    expect(errors).toHaveLength(2);
    await s.stop();
  });
});
