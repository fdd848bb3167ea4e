import { describe, expect, it } from 'vitest';
import { SourceAddresses } from './source-addresses.js';

describe('SourceAddresses', () => {
  it('hands out 127.0.0.1..N round-robin', () => {
    const a = new SourceAddresses(3);
    expect(Array.from({ length: 5 }, () => a.next())).toEqual([
      '127.0.0.1',
      '127.0.0.2',
      '127.0.0.3',
      '127.0.0.1',
      '127.0.0.2',
    ]);
  });

  it('allows 1 to 254 addresses', () => {
    expect(new SourceAddresses(254).next()).toBe('127.0.0.1');
    expect(() => new SourceAddresses(0)).toThrow(/1\.\.254/);
    expect(() => new SourceAddresses(255)).toThrow(/1\.\.254/);
  });
});
