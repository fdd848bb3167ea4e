import { describe, expect, it } from 'vitest';
import { rampLevels } from './ramp.js';

describe('rampLevels', () => {
  it('stops at every step and every memory level, up to and including the top', () => {
    expect(rampLevels([5000, 15_000], 5000, 19_500)).toEqual([5000, 10_000, 15_000, 19_500]);
    expect(rampLevels([300, 600], 500, 1000)).toEqual([300, 500, 600, 1000]);
  });

  it('without steps (Socket.IO, memory only) stops at the memory levels', () => {
    expect(rampLevels([5000, 15_000], 0, 15_000)).toEqual([5000, 15_000]);
  });

  it('drops memory levels above the top', () => {
    expect(rampLevels([5000, 25_000], 5000, 10_000)).toEqual([5000, 10_000]);
  });
});
