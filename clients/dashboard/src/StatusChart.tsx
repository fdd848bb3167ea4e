import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { Counts } from './api.js';

const SERIES = [
  ['sent', '#2563eb'],
  ['pending', '#d97706'],
  ['delivered', '#059669'],
  ['failed', '#dc2626'],
] as const;

/** Transitions per bucket by status (uPlot), redrawn when the data or the width changes. */
export function StatusChart({ series }: { series: Array<Counts & { t: string }> }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      series.map((b) => Date.parse(b.t) / 1000),
      ...SERIES.map(([k]) => series.map((b) => b[k])),
    ];
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        series: [{}, ...SERIES.map(([label, stroke]) => ({ label, stroke, width: 2 }))],
        axes: [{}, { label: 'events' }],
      },
      data,
      el,
    );
    const onResize = () => plot.setSize({ width: width(), height: 240 });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [series]);
  const total = series.reduce((n, b) => n + b.sent + b.pending + b.delivered + b.failed, 0);
  return (
    <figure className="chart">
      <div
        ref={box}
        role="img"
        aria-label={`Chart of events by status over time, ${total} transitions`}
      />
      <figcaption className="sr-only">
        {SERIES.map(([k]) => `${k}: ${series.reduce((n, b) => n + b[k], 0)}`).join(', ')}
      </figcaption>
    </figure>
  );
}
