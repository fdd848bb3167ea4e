import type { FigureId } from '../config.js';
import {
  heraldOverCentrifugo,
  medianOf,
  type PeerLine,
  peerCheck,
  SYSTEM_NAMES,
  SYSTEMS,
} from './peers.js';
import {
  type BenchResults,
  type Check,
  type FigureResult,
  formatNumber,
  type Ratio,
  type Row,
  type ServerProfile,
} from './results.js';

/**
 * The generated part of docs/benchmarks.md: run metadata, a summary of every target, and one table
 * per figure with the median and the spread of the runs.
 */
export function renderMarkdown(results: BenchResults): string {
  const { meta } = results;
  const out: string[] = [];
  out.push(
    `### Run of ${meta.date.slice(0, 16).replace('T', ' ')} UTC${meta.quick ? ' (QUICK smoke run: sizes too small to quote)' : ''}`,
  );
  out.push('');
  out.push('| | |');
  out.push('|---|---|');
  out.push(`| commit | \`${meta.commit}\` |`);
  out.push(`| Node | ${meta.node} |`);
  out.push(`| nats-server | ${meta.natsServer} |`);
  if (meta.centrifugo) out.push(`| Centrifugo | ${meta.centrifugo} |`);
  out.push(`| machine | ${meta.machine} |`);
  out.push(
    `| load average before / after (1, 5, 15 min) | ${meta.loadBefore} / ${meta.loadAfter} |`,
  );
  out.push(`| pinning | ${meta.pinning.join('; ')} |`);
  const ramps = results.figures.some((f) => f.id === '5' || f.id === '6');
  out.push(
    `| repetitions | median of ${meta.runs} runs${ramps && meta.rampRuns !== meta.runs ? ` (connection ramps of figures 5–6: ${meta.rampRuns})` : ''} |`,
  );
  out.push(
    `| settings | ${Object.entries(meta.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')} |`,
  );
  out.push(`| duration | ${(meta.elapsedMs / 1000).toFixed(0)} s |`);
  if (meta.stoppedEarly) out.push(`| **incomplete** | ${meta.stoppedEarly} |`);
  out.push('');
  out.push(...peerSection(results.figures.flatMap((f) => f.peers ?? [])));
  const checks = results.figures.flatMap((f) => f.checks);
  for (const heading of new Set(checks.map((c) => targetsHeading(c.figure)))) {
    out.push(heading);
    out.push('');
    out.push('| # | target | measured | result |');
    out.push('|---|---|---|---|');
    for (const c of checks) if (targetsHeading(c.figure) === heading) out.push(checkLine(c));
    out.push('');
  }
  for (const f of results.figures) out.push(...figureSection(f));
  return `${out.join('\n').trimEnd()}\n`;
}

/** Whose targets a figure's checks are: issue 11's for 1–6, issue 39's (webhooks), issue 40's (push), issue 41's (Pusher), issue 44's (topics). */
function targetsHeading(figure: FigureId): string {
  if (figure === '7') return "#### Issue 39's target (webhooks' cost to online publish)";
  if (figure === '8')
    return "#### Issue 40's target (push's cost to POST /notify of a key without push)";
  if (figure === '9') return "#### Issue 41's targets (the Pusher door within 10% of /ws/connect)";
  if (figure === '10')
    return "#### Issue 44's targets (every copy of a fan-out, /notify's p99 during one)";
  return "#### Issue 11's targets (against the one-process baselines)";
}

/** The processes of Herald's CPU split, in the order an event crosses them. */
const HERALD_PROCESSES = [
  'ingress-api',
  'socket-edge',
  'auth',
  'status',
  'nats-server',
  'postgres',
];

/**
 * The lead of the report (issue 31): every figure for every system, Herald ÷ Centrifugo with the
 * Redis engine as the median of same-run ratios, each target met or missed, with the client
 * Herald's side used (issue 42: the SDK's default client beside the device-less one); then
 * Herald's server CPU per event split by process.
 */
export function peerSection(lines: PeerLine[]): string[] {
  if (lines.length === 0) return [];
  const sorted = [...lines].sort((a, b) => a.order - b.order);
  const out = ['#### Herald against Centrifugo (issue 31)', ''];
  out.push(
    `| figure | Herald's client | ${SYSTEMS.map((s) => SYSTEM_NAMES[s]).join(' | ')} | Herald ÷ Centrifugo-Redis | target | result |`,
  );
  out.push(`|---|---|${SYSTEMS.map(() => '---').join('|')}|---|---|---|`);
  for (const line of sorted) {
    const cells = SYSTEMS.map((s) => {
      const v = medianOf(line, s);
      return Number.isFinite(v) ? `${formatNumber(v)} ${line.unit}` : '–';
    });
    const ratio = heraldOverCentrifugo(line);
    const check = peerCheck(line);
    const verdict = !check
      ? ''
      : check.pass === null
        ? 'not evaluated'
        : check.pass
          ? 'met'
          : '**missed**';
    out.push(
      `| ${line.label} | ${line.client ?? '–'} | ${cells.join(' | ')} | ${Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '–'} | ${line.target?.text ?? ''} | ${verdict} |`,
    );
  }
  out.push('');
  for (const line of sorted) if (line.note) out.push(`- ${line.label}: ${line.note}.`);
  const split = sorted.filter((l) => l.split);
  if (split.length > 0) {
    out.push('', "Herald's server CPU per event by process (µs; share of Herald's total):", '');
    out.push(`| figure | ${HERALD_PROCESSES.join(' | ')} | total |`);
    out.push(`|---|${HERALD_PROCESSES.map(() => '---').join('|')}|---|`);
    for (const line of split) {
      const parts = line.split ?? {};
      const total = Object.values(parts).reduce((a, b) => a + b, 0);
      const cell = (p: string) => {
        const v = parts[p];
        return v === undefined
          ? '–'
          : `${formatNumber(v)} (${total > 0 ? Math.round((100 * v) / total) : 0}%)`;
      };
      out.push(
        `| ${line.label} | ${HERALD_PROCESSES.map(cell).join(' | ')} | ${formatNumber(total)} |`,
      );
    }
  }
  out.push('');
  return out;
}

function checkLine(c: Check): string {
  const verdict = c.pass === null ? 'not evaluated' : c.pass ? 'met' : '**missed**';
  return `| ${c.figure} | ${c.target} | ${c.measured} | ${verdict} |`;
}

function figureSection(f: FigureResult): string[] {
  const out = [`#### ${f.id}. ${f.title}`, ''];
  out.push('| metric | measured | median | runs (min – max) |');
  out.push('|---|---|---|---|');
  for (const r of f.rows) out.push(rowLine(r));
  out.push('');
  if (f.ratios && f.ratios.length > 0) {
    out.push('| same-run ratio | median | runs (min – max) |');
    out.push('|---|---|---|');
    for (const r of f.ratios) out.push(ratioLine(r));
    out.push('');
  }
  if (f.notes.length > 0) {
    for (const n of f.notes) out.push(`- ${n}`);
    out.push('');
  }
  for (const p of f.profiles ?? []) out.push(...profileSection(p));
  return out;
}

/** A missed target's evidence: the server's top frames by self time, then its own code inclusive. */
function profileSection(p: ServerProfile): string[] {
  const list = (frames: ServerProfile['self']) =>
    frames.map((f) => `\`${f.name.replace(/`/g, "'")}\` ${f.percent.toFixed(1)}%`).join(', ');
  return [
    `Profile of ${p.server} during this figure (${p.busySamples.toLocaleString('en-US')} busy samples): top frames by self time: ${list(p.self) || 'none'}; project code, inclusive: ${list(p.inclusive) || 'none'}.`,
    '',
  ];
}

function ratioLine(r: Ratio): string {
  const finite = r.runs.filter(Number.isFinite);
  const spread =
    finite.length > 1
      ? `${formatRatioPlain(Math.min(...finite))} – ${formatRatioPlain(Math.max(...finite))}`
      : '–';
  return `| ${r.label} | ${formatRatioPlain(r.median)} | ${spread} |`;
}

function formatRatioPlain(v: number): string {
  return Number.isFinite(v) ? `${v.toFixed(2)}×` : '–';
}

function rowLine(r: Row): string {
  const finite = r.runs.filter(Number.isFinite);
  const spread =
    finite.length > 1
      ? `${formatNumber(Math.min(...finite))} – ${formatNumber(Math.max(...finite))}`
      : '–';
  const who = r.role === 'herald' ? `**${r.subject}**` : r.subject;
  return `| ${r.metric} | ${who} | ${formatNumber(r.median)} ${r.unit} | ${spread} |`;
}
