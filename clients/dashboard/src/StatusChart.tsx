import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { Counts } from './api.js';

/** Each status, its colour, and its name in the legend (the page's tiles say the same). */
const SERIES = [
  ['sent', '#2563eb', 'delivered live'],
  ['pending', '#d97706', 'queued'],
  ['delivered', '#059669', 'delivered from the queue'],
  ['failed', '#dc2626', 'failed'],
] as const;

type Bucket = Counts & { t: string };

function aligned(series: Bucket[]): uPlot.AlignedData {
  return [
    series.map((b) => Date.parse(b.t) / 1000),
    ...SERIES.map(([k]) => series.map((b) => b[k])),
  ];
}

/**
 * Transitions per bucket by status (uPlot). Made once and fed new data on every refresh, so a
 * hover survives the page's own refreshes. Its legend shows each status's total in the window,
 * and the bucket's values while the pointer is over the chart; the y axis starts at 0 and counts
 * whole events. With nothing in the window it says so instead of drawing flat lines.
 */
export function StatusChart({ series }: { series: Bucket[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const totals = useRef<Record<string, number>>({});
  totals.current = Object.fromEntries(
    SERIES.map(([k]) => [k, series.reduce((n, b) => n + b[k], 0)]),
  );
  const total = Object.values(totals.current).reduce((a, b) => a + b, 0);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(280, el.clientWidth);
    const made = new uPlot(
      {
        width: width(),
        height: 240,
        series: [
          {},
          ...SERIES.map(([key, stroke, label]) => ({
            label,
            stroke,
            width: 2,
            // Not hovering: the window's total; hovering: the bucket's count.
            value: (_u: uPlot, v: number | null, _s: number, idx: number | null) =>
              idx == null ? `${totals.current[key] ?? 0} in window` : String(v ?? 0),
          })),
        ],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
        axes: [{}, { label: 'events', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000] }],
      },
      [[], [], [], [], []],
      el,
    );
    plot.current = made;
    const onResize = () => made.setSize({ width: width(), height: 240 });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      made.destroy();
      plot.current = undefined;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(aligned(series));
  }, [series]);

  return (
    <figure className="chart">
      <div
        ref={box}
        role="img"
        aria-label={`Chart of events by status over time, ${total} transitions`}
      />
      {total === 0 && (
        <p className="chart-empty" data-testid="chart-empty">
          No data yet: events sent in this window appear here.
        </p>
      )}
      <figcaption className="sr-only">
        {SERIES.map(([k]) => `${k}: ${totals.current[k]}`).join(', ')}
      </figcaption>
    </figure>
  );
}
