/**
 * Where a server's CPU time went, from a V8 CPU profile (`node --cpu-prof`):
 * `node --import tsx bench/src/report/profile-top.ts <file.cpuprofile | profiles-dir server> [count] [skip-s]`,
 * e.g. `… bench/results/profiles ingress-api 25 8` (the dir's processes.json maps servers to pids;
 * the first 8 s, start-up under tsx, are left out). Prints the heaviest functions by self time,
 * then the heaviest of the project's own functions by inclusive time.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds on the machine's monotonic clock (the clock of `process.hrtime` in every process). */
  startTime?: number;
  samples?: number[];
  /** Microseconds between consecutive samples (the first is from the profile's start). */
  timeDeltas?: number[];
}

export interface Frame {
  name: string;
  /** Share of the busy samples (all but `(idle)`) spent in (self) or under (inclusive) it, percent. */
  percent: number;
}

export interface ProfileSummary {
  busySamples: number;
  self: Frame[];
  /** Functions of the project (services/, proto/, lib/, bench/) by inclusive time. */
  inclusive: Frame[];
}

/** A span of the monotonic clock, µs (`process.hrtime.bigint() / 1000n` in the bench runner). */
export interface ClockWindow {
  fromUs: number;
  toUs: number;
}

/** Now on the clock V8 stamps profiles with, µs. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Summarises the samples taken after `skipMs` (start-up is not the load), and within `window` when
 * given (one figure of a run). Shares are of the busy samples: a server profiled over a whole run
 * idles between measurements, and what matters is where its working time went. GC and
 * `(program)` stay in.
 */
export function summarizeProfile(
  profile: CpuProfile,
  count: number,
  skipMs = 0,
  window?: ClockWindow,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selected = selectSamples(profile, skipMs, window);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const id of selected) {
    const leaf = byId.get(id);
    if (!leaf || leaf.callFrame.functionName === '(idle)') continue;
    busy++;
    self.set(frameName(leaf), (self.get(frameName(leaf)) ?? 0) + 1);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (n && isProjectCode(n.callFrame.url)) seen.add(frameName(n));
    }
    for (const name of seen) inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
  }
  const top = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, h]) => ({ name, percent: busy > 0 ? (100 * h) / busy : 0 }));
  return { busySamples: busy, self: top(self), inclusive: top(inclusive) };
}

/**
 * The sampled node ids after skipMs (and inside the window, on the profile's own clock); every
 * node's hit count when the profile has no samples.
 */
function selectSamples(profile: CpuProfile, skipMs: number, window?: ClockWindow): number[] {
  const samples = profile.samples ?? [];
  if (samples.length === 0) {
    return profile.nodes.flatMap((n) => Array.from({ length: n.hitCount ?? 0 }, () => n.id));
  }
  const deltas = profile.timeDeltas ?? [];
  const start = profile.startTime ?? 0;
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    if (t / 1000 < skipMs) continue;
    if (window && (start + t < window.fromUs || start + t > window.toUs)) continue;
    out.push(samples[i] as number);
  }
  return out;
}

function isProjectCode(url: string): boolean {
  return /\/(services|proto|lib|bench)\//.test(url) && !url.includes('/node_modules/');
}

function frameName(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const fn = functionName || '(anonymous)';
  if (!url) return fn;
  const path = url.replace(/^file:\/\//, '');
  // A package by its name; the project's files by their path in the repository, whichever
  // checkout they ran from.
  const short = path.includes('/node_modules/')
    ? path.replace(/^.*\/node_modules\//, '')
    : path.replace(/^.*?\/((?:services|proto|lib|bench)\/)/, '$1');
  return `${fn} ${short}:${lineNumber + 1}`;
}

/** The main-thread profile (thread id 0) of the named server in a BENCH_CPU_PROF directory. */
export function profileOf(dir: string, server: string): string {
  const processes = JSON.parse(readFileSync(join(dir, 'processes.json'), 'utf8')) as Array<{
    name: string;
    pid: number;
  }>;
  const pid = processes.find((p) => p.name === server)?.pid;
  if (pid === undefined) {
    throw new Error(
      `no server named ${server} in ${dir}/processes.json: ${processes.map((p) => p.name).join(', ')}`,
    );
  }
  const file = readdirSync(dir).find((f) =>
    new RegExp(`^CPU\\.\\d+\\.\\d+\\.${pid}\\.0\\.`).test(f),
  );
  if (!file) throw new Error(`no main-thread profile of ${server} (pid ${pid}) in ${dir}`);
  return join(dir, file);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const target = args[0];
  if (!target) {
    process.stderr.write(
      'usage: profile-top.ts <file.cpuprofile | profiles-dir server> [count] [skip-s]\n',
    );
    process.exit(2);
  }
  const isDir = statSync(target).isDirectory();
  const file = isDir ? profileOf(target, args[1] ?? '') : target;
  const [count, skip] = (isDir ? args.slice(2) : args.slice(1)).map(Number);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const s = summarizeProfile(profile, count || 25, (skip || 0) * 1000);
  const print = (title: string, frames: Frame[]) => {
    process.stdout.write(`${title}\n`);
    for (const f of frames)
      process.stdout.write(`${f.percent.toFixed(1).padStart(5)}%  ${f.name}\n`);
  };
  process.stdout.write(`${file}: ${s.busySamples} busy samples\n`);
  print('self time:', s.self);
  print('inclusive time, project code:', s.inclusive);
}
