import { describe, expect, it } from 'vitest';
import { summarizeProfile } from './profile-top.js';

const node = (id: number, functionName: string, url = '', children: number[] = []) => ({
  id,
  callFrame: { functionName, url, lineNumber: 9 },
  children,
});

// (root) → handle (services) → parse (services) → write (node_modules); (idle) beside it.
const profile = {
  nodes: [
    node(1, '(root)', '', [2, 5]),
    node(2, 'handle', 'file:///work/main/services/x/src/app.ts', [3]),
    node(3, 'parse', 'file:///work/wt-other/services/x/src/parse.ts', [4]),
    node(4, 'write', 'file:///work/main/node_modules/ws/lib/sender.js'),
    node(5, '(idle)'),
  ],
  samples: [5, 2, 3, 4, 4, 5, 3, 2],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
};

describe('summarizeProfile', () => {
  it('ranks functions by their share of the busy samples, idle left out', () => {
    const s = summarizeProfile(profile, 3);
    expect(s.busySamples).toBe(6);
    expect(s.self.map((f) => f.name)).toEqual([
      'handle services/x/src/app.ts:10',
      'parse services/x/src/parse.ts:10',
      'write ws/lib/sender.js:10',
    ]);
    expect(s.self[0]?.percent).toBeCloseTo((100 * 2) / 6);
  });

  it("counts the project's own functions inclusively: everything under them", () => {
    const s = summarizeProfile(profile, 5);
    expect(s.inclusive).toEqual([
      { name: 'handle services/x/src/app.ts:10', percent: 100 },
      { name: 'parse services/x/src/parse.ts:10', percent: (100 * 4) / 6 },
    ]);
  });

  it('leaves out the samples of the first skipMs (start-up)', () => {
    // Samples at 1..8 ms; from 6 ms on: (idle), parse, handle.
    const s = summarizeProfile(profile, 5, 6);
    expect(s.busySamples).toBe(2);
    expect(s.self.map((f) => f.name)).toEqual([
      'parse services/x/src/parse.ts:10',
      'handle services/x/src/app.ts:10',
    ]);
  });

  it('keeps only the samples inside a window of the monotonic clock (one figure of a run)', () => {
    // The profile started at 100,000 µs; samples at 101,000..108,000 µs. Window 102,000–104,000:
    // handle, parse, write.
    const s = summarizeProfile({ ...profile, startTime: 100_000 }, 5, 0, {
      fromUs: 102_000,
      toUs: 104_000,
    });
    expect(s.busySamples).toBe(3);
    expect(s.self.map((f) => f.name).sort()).toEqual([
      'handle services/x/src/app.ts:10',
      'parse services/x/src/parse.ts:10',
      'write ws/lib/sender.js:10',
    ]);
  });

  it('falls back to hit counts when there are no samples', () => {
    const hits = {
      nodes: [
        { ...node(1, 'a'), hitCount: 3 },
        { ...node(2, 'b'), hitCount: 1 },
      ],
    };
    expect(summarizeProfile(hits, 1).self).toEqual([{ name: 'a', percent: 75 }]);
  });
});
