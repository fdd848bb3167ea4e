import { eventually } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { metricValue, openFds, type Probe, postgresProbe, startSampler } from './sampler.js';

describe('metricValue', () => {
  const text = [
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    'process_resident_memory_bytes{service="auth"} 123456789',
    'nodejs_heap_size_used_bytes{service="auth"} 4.5e7',
    'process_open_fds 31',
    'nodejs_heap_used_after_gc_bytes{service="auth"} 31000000',
  ].join('\n');
  it('reads a metric with or without labels, skipping its comments', () => {
    expect(metricValue(text, 'process_resident_memory_bytes')).toBe(123_456_789);
    expect(metricValue(text, 'nodejs_heap_size_used_bytes')).toBe(45_000_000);
    expect(metricValue(text, 'process_open_fds')).toBe(31);
    expect(metricValue(text, 'nodejs_heap_used_after_gc_bytes')).toBe(31_000_000);
    expect(metricValue(text, 'process_start_time_seconds')).toBeUndefined();
  });
});

describe('reading /proc', () => {
  it("counts this process's descriptors and its own memory as a tree", async () => {
    expect(openFds(process.pid)).toBeGreaterThan(2);
    const r = await postgresProbe(process.pid).read();
    expect(r?.life).toBe(String(process.pid));
    expect(r?.rssBytes).toBeGreaterThan(1024 * 1024);
  });
});

describe('startSampler', () => {
  it('keeps sampling after a probe throws or has nothing, and takes one last sample on stop', async () => {
    let calls = 0;
    const flaky: Probe = {
      process: 'flaky',
      async read() {
        calls++;
        if (calls === 1) throw new Error('half-written answer');
        if (calls === 2) return undefined;
        return { life: '1', rssBytes: calls };
      },
    };
    const steady: Probe = { process: 'steady', read: async () => ({ life: 'a', rssBytes: 7 }) };
    const sampler = startSampler([flaky, steady], 10, Date.now());
    await eventually(() => calls >= 4, 'four rounds');
    const samples = await sampler.stop();
    const flakyValues = samples.filter((s) => s.process === 'flaky').map((s) => s.rssBytes);
    expect(flakyValues.slice(0, 2)).toEqual([3, 4]);
    expect(flakyValues.at(-1)).toBe(calls);
    expect(samples.filter((s) => s.process === 'steady').length).toBe(calls);
  });
});
