import { describe, expect, it } from 'vitest';
import { processesOf, samplesCsv } from './samples.js';

describe('samplesCsv', () => {
  it('writes a header and one row per sample, empty cells for missing values', () => {
    const csv = samplesCsv([
      {
        t: 0,
        process: 'auth',
        life: '1700000000',
        rssBytes: 1000,
        heapUsedBytes: 500,
        openFds: 30,
        heapAfterGcBytes: 400,
      },
      { t: 10.04, process: 'nats-server', life: '42', rssBytes: 2000, openFds: 12, consumers: 3 },
    ]);
    expect(csv).toBe(
      [
        't_s,process,life,rss_bytes,heap_used_bytes,open_fds,consumers,heap_after_gc_bytes',
        '0.0,auth,1700000000,1000,500,30,,400',
        '10.0,nats-server,42,2000,,12,3,',
        '',
      ].join('\n'),
    );
  });

  it('quotes a cell with a comma or a quote', () => {
    const csv = samplesCsv([{ t: 1, process: 'a,"b"', life: '1', rssBytes: 1 }]);
    expect(csv.split('\n')[1]).toBe('1.0,"a,""b""",1,1,,,,');
  });
});

describe('processesOf', () => {
  it('lists each process once, in first-seen order', () => {
    const s = (process: string) => ({ t: 0, process, life: '1', rssBytes: 1 });
    expect(processesOf([s('b'), s('a'), s('b')])).toEqual(['b', 'a']);
  });
});
