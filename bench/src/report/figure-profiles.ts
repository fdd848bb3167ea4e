import { readFileSync } from 'node:fs';
import type { FigureId } from '../config.js';
import { type ClockWindow, type CpuProfile, profileOf, summarizeProfile } from './profile-top.js';
import type { FigureResult } from './results.js';

/** Herald's Node processes whose profiles explain each figure's misses (nats-server is Go). */
const PROFILED: Record<FigureId, string[]> = {
  '1': ['ingress-api', 'socket-edge'],
  '2': ['ingress-api', 'socket-edge'],
  '3': ['ingress-api'],
  '4': ['socket-edge'],
  '5': ['socket-edge'],
  '6': ['socket-edge'],
};
/** Frames listed per server and kind (self, inclusive). */
const PROFILE_FRAMES = 8;

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
    if (!window || !f.checks.some((c) => c.pass === false)) continue;
    f.profiles = PROFILED[f.id].flatMap((server) => {
      const p = profile(server);
      if (!p) return [];
      const s = summarizeProfile(p, PROFILE_FRAMES, 0, window);
      return [{ server, busySamples: s.busySamples, self: s.self, inclusive: s.inclusive }];
    });
  }
}
