import { processesOf, type Restart, type Sample } from './samples.js';

const MB = 1024 * 1024;
const W = 960;
const H = 480;
const PAD = { left: 64, right: 180, top: 32, bottom: 48 };
/** One colour per process, in order; more processes than colours reuse them with a dash. */
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2'];

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Round tick values covering 0..max, about `n` of them. */
export function ticks(max: number, n = 5): number[] {
  if (!(max > 0)) return [0];
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let i = 0; ; i++) {
    const v = Number((i * step).toPrecision(12));
    out.push(v);
    if (v >= max) return out;
  }
}

/**
 * Every process's RSS (MB) over the run (minutes) as a hand-written SVG line chart: one polyline
 * per life of a process (a restart breaks its line), every injected restart a dashed vertical
 * line with its name, a legend on the right. No dependency: the plot is text the results keep.
 */
export function memoryPlotSvg(
  samples: readonly Sample[],
  restarts: readonly Restart[],
  title: string,
): string {
  const procs = processesOf(samples);
  const maxT = Math.max(1 / 60, ...samples.map((s) => s.t / 60), ...restarts.map((r) => r.t / 60));
  const maxY = Math.max(1, ...samples.map((s) => s.rssBytes / MB));
  const xt = ticks(maxT);
  const yt = ticks(maxY);
  const xMax = xt.at(-1) ?? maxT;
  const yMax = yt.at(-1) ?? maxY;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (min: number) => PAD.left + (min / xMax) * plotW;
  const y = (mb: number) => PAD.top + plotH - (mb / yMax) * plotH;
  const f = (v: number) => v.toFixed(1);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12" role="img" aria-labelledby="soak-title">`,
    `<title id="soak-title">${esc(title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`,
  ];
  for (const v of xt) {
    out.push(
      `<line x1="${f(x(v))}" y1="${PAD.top}" x2="${f(x(v))}" y2="${PAD.top + plotH}" stroke="#eee"/>`,
      `<text x="${f(x(v))}" y="${PAD.top + plotH + 16}" text-anchor="middle">${v}</text>`,
    );
  }
  for (const v of yt) {
    out.push(
      `<line x1="${PAD.left}" y1="${f(y(v))}" x2="${PAD.left + plotW}" y2="${f(y(v))}" stroke="#eee"/>`,
      `<text x="${PAD.left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${v}</text>`,
    );
  }
  out.push(
    `<rect x="${PAD.left}" y="${PAD.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${PAD.left + plotW / 2}" y="${H - 10}" text-anchor="middle">minutes since the load started</text>`,
    `<text transform="translate(16 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle">RSS, MB</text>`,
  );
  for (const r of restarts) {
    out.push(
      `<line x1="${f(x(r.t / 60))}" y1="${PAD.top}" x2="${f(x(r.t / 60))}" y2="${PAD.top + plotH}" stroke="#000" stroke-dasharray="4 3"><title>${esc(r.process)} restarted</title></line>`,
      `<text x="${f(x(r.t / 60) + 3)}" y="${PAD.top + 12}" font-size="10">${esc(r.process)} restart</text>`,
    );
  }
  procs.forEach((p, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const dash = i >= COLOURS.length ? ' stroke-dasharray="6 2"' : '';
    const lives = new Map<string, Sample[]>();
    for (const s of samples) {
      if (s.process !== p) continue;
      lives.set(s.life, [...(lives.get(s.life) ?? []), s]);
    }
    for (const life of lives.values()) {
      const pts = life.map((s) => `${f(x(s.t / 60))},${f(y(s.rssBytes / MB))}`).join(' ');
      out.push(
        `<polyline points="${pts}" fill="none" stroke="${colour}" stroke-width="1.5"${dash}><title>${esc(p)}</title></polyline>`,
      );
    }
    const ly = PAD.top + 10 + i * 18;
    const lx = PAD.left + plotW + 12;
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${colour}" stroke-width="2"${dash}/>`,
      `<text x="${lx + 30}" y="${ly + 4}">${esc(p)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
