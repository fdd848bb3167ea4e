import { readFileSync } from 'node:fs';
import type { FigureId } from '../config.js';
import { peerCheck } from './peers.js';
import { type ClockWindow, type CpuProfile, profileOf, summarizeProfile } from './profile-top.js';
import type { FigureResult } from './results.js';

/** Herald's Node processes whose profiles explain each figure's misses (nats-server is Go). */
const PROFILED: Record<FigureId, string[]> = {
  '1': ['ingress-api', 'socket-edge', 'status'],
  '2': ['ingress-api', 'socket-edge', 'status'],
  '3': ['ingress-api', 'status'],
  '4': ['ingress-api', 'socket-edge', 'status'],
  '5': ['socket-edge', 'auth'],
  '6': ['socket-edge', 'auth'],
  '7': ['status', 'ingress-api', 'socket-edge'],
  '8': ['status', 'ingress-api', 'socket-edge'],
  '9': ['ingress-api', 'socket-edge', 'auth'],
  '10': ['ingress-api', 'status', 'socket-edge'],
};
/** Frames listed per server and kind (self, inclusive). */
const PROFILE_FRAMES = 8;

/** Whether a figure missed a target: issue 31's against Centrifugo, or an earlier one. */
export function missedTarget(f: FigureResult): boolean {
  return (
    f.checks.some((c) => c.pass === false) ||
    (f.peers ?? []).some((line) => peerCheck(line)?.pass === false)
  );
}

/** For every figure with a missed target: its Herald servers' top frames over its span. */
export function attachProfiles(
  dir: string,
  figures: FigureResult[],
  windows: Map<FigureResult, ClockWindow>,
  say: (m: string) => void,
): void {
  const parsed = new Map<string, CpuProfile | null>();
  const profile = (server: string) => {
    if (!parsed.has(server)) {
      try {
        parsed.set(server, JSON.parse(readFileSync(profileOf(dir, server), 'utf8')) as CpuProfile);
      } catch (err) {
        say(`no CPU profile of ${server}: ${err instanceof Error ? err.message : String(err)}`);
        parsed.set(server, null);
      }
    }
    return parsed.get(server) ?? undefined;
  };
  for (const f of figures) {
    const window = windows.get(f);
    if (!window || !missedTarget(f)) continue;
    f.profiles = PROFILED[f.id].flatMap((server) => {
      const p = profile(server);
      if (!p) return [];
      const s = summarizeProfile(p, PROFILE_FRAMES, 0, window);
      return [{ server, busySamples: s.busySamples, self: s.self, inclusive: s.inclusive }];
    });
  }
}
