import { describe, expect, it } from 'vitest';
import { peerSection } from './markdown.js';
import {
  declare,
  heraldOverCentrifugo,
  PeerCollector,
  type PeerLine,
  peerCheck,
  peerRows,
} from './peers.js';

/** The one line a collector holds. */
const only = (peers: PeerCollector): PeerLine => {
  const [line] = peers.lines();
  if (!line) throw new Error('no line');
  return line;
};

const rows = peerRows({
  concurrency: 64,
  batchSize: 100,
  batchConcurrency: 8,
  latencyRate: 500,
  drainOne: 10_000,
  drainMany: 500,
  drainEach: 20,
});

describe("issue 31's comparison", () => {
  it('judges Herald ÷ Centrifugo-Redis on the median of same-run ratios, not a ratio of medians', () => {
    const peers = new PeerCollector('2');
    const label = rows.online.label;
    peers.line(rows.online.order, label, rows.online.unit, rows.online.target);
    // Run 2 was slow for both: its ratio is still 1.0.
    for (const [h, c] of [
      [900, 1000],
      [450, 450],
      [1200, 1000],
    ] as const) {
      peers.add(label, 'herald', h);
      peers.add(label, 'centrifugoRedis', c);
    }
    expect(heraldOverCentrifugo(only(peers))).toBeCloseTo(1.0);
    expect(peerCheck(only(peers))).toMatchObject({ figure: '2', measured: '1.000×', pass: true });
  });

  it('states each target as met or missed, in the direction the issue gives it', () => {
    const peers = new PeerCollector('5');
    peers.line(rows.memory.order, rows.memory.label, rows.memory.unit, rows.memory.target);
    peers.add(rows.memory.label, 'herald', 40);
    peers.add(rows.memory.label, 'centrifugoRedis', 60);
    expect(peerCheck(only(peers))?.pass).toBe(false); // 0.67× > 0.6×
    const dup = new PeerCollector('2');
    dup.line(rows.duplicates.order, rows.duplicates.label, '%', rows.duplicates.target);
    dup.add(rows.duplicates.label, 'herald', 46);
    dup.add(rows.duplicates.label, 'centrifugoRedis', 0);
    expect(peerCheck(only(dup))).toMatchObject({ measured: '46.0 %', pass: false });
  });

  it('says "not measured" when Centrifugo did not run, never a verdict', () => {
    const peers = new PeerCollector('4');
    peers.line(rows.drain.order, rows.drain.label, rows.drain.unit, rows.drain.target);
    peers.add(rows.drain.label, 'herald', 17_000);
    expect(peerCheck(only(peers))).toMatchObject({
      measured: 'not measured',
      pass: null,
    });
  });

  it('keeps Herald’s CPU split by process and refuses an undeclared line', () => {
    const peers = new PeerCollector('2');
    peers.line(rows.onlineCpu.order, rows.onlineCpu.label, 'µs');
    peers.add(rows.onlineCpu.label, 'herald', 300, { 'ingress-api': 100, 'socket-edge': 200 });
    peers.add(rows.onlineCpu.label, 'herald', 500, { 'ingress-api': 300, 'socket-edge': 200 });
    expect(peers.lines()[0]?.split).toEqual({ 'ingress-api': 200, 'socket-edge': 200 });
    expect(() => peers.add('nope', 'herald', 1)).toThrow(/never declared/);
  });

  it("names each line's client, the SDK's default beside the device-less rows", () => {
    const peers = new PeerCollector('4');
    for (const r of [rows.drain, rows.drainFirst]) {
      declare(peers, r);
      peers.add(r.label, 'herald', 5000);
      peers.add(r.label, 'centrifugoRedis', 20_000);
    }
    const md = peerSection(peers.lines()).join('\n');
    expect(md).toContain(
      `| ${rows.drain.label} | herald.v1, batch=1, no device | 5,000 events/s | 20,000 events/s |`,
    );
    expect(md).toContain(
      `| ${rows.drainFirst.label} | SDK default (herald.v1, batch=1, device) | 5,000 events/s |`,
    );
    expect(md.indexOf(rows.drain.label)).toBeLessThan(md.indexOf(rows.drainFirst.label));
  });

  it('gives every line a label of its own, so no two rows share one median', () => {
    const labels = Object.values(rows).map((r) => r.label);
    expect(new Set(labels).size).toBe(labels.length);
  });

  it('renders the lead table in the order of the issue, with every system and the split', () => {
    const a = new PeerCollector('4');
    a.line(
      rows.store.order,
      rows.store.label,
      rows.store.unit,
      rows.store.target,
      'no store',
      rows.store.client,
    );
    a.add(rows.store.label, 'herald', 5000);
    a.add(rows.store.label, 'centrifugoRedis', 10_000);
    const b = new PeerCollector('2');
    b.line(rows.onlineCpu.order, rows.onlineCpu.label, 'µs', rows.onlineCpu.target);
    b.add(rows.onlineCpu.label, 'herald', 300, { 'ingress-api': 100, 'socket-edge': 200 });
    b.add(rows.onlineCpu.label, 'centrifugoRedis', 100);
    const md = peerSection([...a.lines(), ...b.lines()]).join('\n');
    expect(md.indexOf(rows.onlineCpu.label)).toBeLessThan(md.indexOf(rows.store.label));
    expect(md).toContain(
      '| store 10,000 for one offline recipient: events/s | HTTP API | 5,000 events/s | 10,000 events/s | – | – | – | – | 0.50× | ≥ 1.0× | **missed** |',
    );
    expect(md).toContain('| online publish: server CPU per event | 100 (33%) | 200 (67%) | – |');
    expect(md).toContain('- store 10,000 for one offline recipient: events/s: no store.');
  });
});
