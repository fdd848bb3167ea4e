import { describe, expect, it } from 'vitest';
import { memoryPlotSvg, ticks } from './svg.js';

const MB = 1024 * 1024;

describe('ticks', () => {
  it('covers the range with round steps', () => {
    expect(ticks(10)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(ticks(3.2)).toEqual([0, 1, 2, 3, 4]);
    expect(ticks(0.9)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(ticks(110)).toEqual([0, 50, 100, 150]);
    expect(ticks(0)).toEqual([0]);
  });
});

describe('memoryPlotSvg', () => {
  const samples = [
    { t: 0, process: 'socket-edge', life: 'a', rssBytes: 100 * MB },
    { t: 60, process: 'socket-edge', life: 'a', rssBytes: 110 * MB },
    { t: 120, process: 'socket-edge', life: 'b', rssBytes: 90 * MB },
    { t: 180, process: 'socket-edge', life: 'b', rssBytes: 95 * MB },
    { t: 0, process: 'nats-<server>', life: '1', rssBytes: 40 * MB },
    { t: 180, process: 'nats-<server>', life: '1', rssBytes: 45 * MB },
  ];
  const svg = memoryPlotSvg(samples, [{ t: 90, process: 'socket-edge' }], 'soak & co');

  it('is one SVG document with escaped text', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('soak &amp; co');
    expect(svg).toContain('<title id="soak-title">soak &amp; co</title>');
    expect(svg).toContain('nats-&lt;server&gt;');
    expect(svg).not.toContain('nats-<server>');
  });

  it('draws a line per life of each process, and marks each restart', () => {
    expect(svg.match(/<polyline /g)).toHaveLength(3);
    expect(svg.match(/stroke-dasharray="4 3"/g)).toHaveLength(1);
    expect(svg).toContain('socket-edge restart');
    // 0..3 minutes on x (64..780 px), 0..150 MB on y (432..32 px): 100 MB at 0, 110 MB at 1.
    expect(svg).toContain('points="64.0,165.3 302.7,138.7"');
  });
});
