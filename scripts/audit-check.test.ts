import { describe, expect, it } from 'vitest';
import { acceptedIds, unacceptedAdvisories } from './audit-check.js';

const advisory = (id: string, severity: string) => ({
  url: `https://github.com/advisories/${id}`,
  severity,
  name: 'pkg',
  range: '<1.2.3',
  title: 't',
});

describe('audit-check', () => {
  const report = {
    vulnerabilities: {
      pkg: {
        via: [advisory('GHSA-aaaa-bbbb-cccc', 'high'), advisory('GHSA-dddd-eeee-ffff', 'low')],
      },
      parent: { via: ['pkg'] },
      other: { via: [advisory('GHSA-gggg-hhhh-jjjj', 'critical')] },
    },
  };

  it('fails on every high or critical advisory not accepted, once each, ignoring lower ones', () => {
    expect(unacceptedAdvisories(report, new Set()).map((a) => a.url?.split('/').pop())).toEqual([
      'GHSA-aaaa-bbbb-cccc',
      'GHSA-gggg-hhhh-jjjj',
    ]);
  });

  it('passes an advisory accepted by id in the exceptions file, and only that one', () => {
    const accepted = acceptedIds('| GHSA-aaaa-bbbb-cccc | pkg <1.2.3 | never called | ... |');
    expect(unacceptedAdvisories(report, accepted).map((a) => a.url?.split('/').pop())).toEqual([
      'GHSA-gggg-hhhh-jjjj',
    ]);
  });

  it('refuses a report of an audit that did not run (the 405 these machines get)', () => {
    expect(() =>
      unacceptedAdvisories({ error: { code: 'E405', summary: 'Method Not Allowed' } }, new Set()),
    ).toThrow(/did not run \(Method Not Allowed/);
  });
});
