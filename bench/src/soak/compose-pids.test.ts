import { describe, expect, it } from 'vitest';
import { parseServicePids } from './compose-pids.js';

describe('parseServicePids', () => {
  it("maps each running container's service to its host pid", () => {
    const text = ['nats 4120', 'postgres 3988', 'socket-edge 5120', ''].join('\n');
    expect([...parseServicePids(text)]).toEqual([
      ['nats', 4120],
      ['postgres', 3988],
      ['socket-edge', 5120],
    ]);
  });
  it('leaves out a stopped container (pid 0) and lines that are not "service pid"', () => {
    const text = ['nats 0', 'retention', 'Error: No such object: 1f2e', ' status 77 '].join('\n');
    expect([...parseServicePids(text)]).toEqual([['status', 77]]);
  });
  it('keeps the running one of a service listed twice (its old container stopped)', () => {
    expect(parseServicePids('socket-edge 0\nsocket-edge 812\n').get('socket-edge')).toBe(812);
    expect(parseServicePids('socket-edge 812\nsocket-edge 0\n').get('socket-edge')).toBe(812);
  });
});
