import { describe, expect, it } from 'vitest';
import { metricValue, openFds, postgresProbe } from './sampler.js';

describe('metricValue', () => {
  const text = [
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    'process_resident_memory_bytes{service="auth"} 123456789',
    'nodejs_heap_size_used_bytes{service="auth"} 4.5e7',
    'process_open_fds 31',
  ].join('\n');
  it('reads a metric with or without labels, skipping its comments', () => {
    expect(metricValue(text, 'process_resident_memory_bytes')).toBe(123_456_789);
    expect(metricValue(text, 'nodejs_heap_size_used_bytes')).toBe(45_000_000);
    expect(metricValue(text, 'process_open_fds')).toBe(31);
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
