import { parse as parseJunit, type TestSuites } from 'junit2json';
import { describe, expect, it } from 'vitest';
import { junitXml, markdownSummary, type RunReport, table } from '../../src/conformance/reports.js';

/** The runner's reports (src/conformance/reports.ts) hold whatever a client printed, read back as it was. */

const report: RunReport = {
  url: 'http://127.0.0.1:8080',
  command: 'python3 client.py --flag "a|b"',
  catalogueVersion: '2026-11-28',
  seconds: 3.25,
  startedAt: '2026-11-28T10:00:00.000Z',
  verdicts: [
    { id: 'retry-after-503', title: 'A 503, then success', passed: true, reasons: [], tail: ['ok'], seconds: 1.5 },
    {
      id: 'reset-order',
      title: "An order's answer lost",
      passed: false,
      reasons: ['the command exited with code 1', 'idempotent-retries failed: <POST> & "quotes" | pipes'],
      tail: ['Traceback \u0007 <stderr>', 'ConnectionResetError: [Errno 104] & more', ']]> not a CDATA end'],
      seconds: 0.25,
    },
  ],
};

describe('the reports', () => {
  it('JUnit XML: a test case per scenario, each failure with its reasons and output, read back as written', async () => {
    const parsed = (await parseJunit(junitXml(report))) as TestSuites;
    expect(parsed).toMatchObject({ tests: 2, failures: 1, time: 3.3 });
    const [passed, failed] = parsed.testsuite![0]!.testcase!;
    expect(passed).toMatchObject({ name: 'retry-after-503', classname: 'petstore.conformance', time: 1.5 });
    expect(passed!.failure).toBeUndefined();
    expect(failed!.failure![0]).toMatchObject({
      message: 'the command exited with code 1',
      inner: report.verdicts[1]!.reasons.join('\n'),
    });
    // A control character XML cannot hold is dropped; everything else comes back as printed.
    expect(failed!['system-out']).toEqual([
      'Traceback  <stderr>\nConnectionResetError: [Errno 104] & more\n]]> not a CDATA end',
    ]);
  });

  it('Markdown: a table, then each failure with its reasons and its output folded', () => {
    const markdown = markdownSummary(report);
    expect(markdown).toContain('## Petstore conformance: 1 of 2 scenarios passed');
    expect(markdown).toContain('| [reset-order](http://127.0.0.1:8080/scenarios/reset-order) | ❌ failed | 0.3 s |');
    expect(markdown).toContain('`python3 client.py --flag "a\\|b"`');
    expect(markdown).toContain("### reset-order: An order's answer lost\n\n- the command exited with code 1\n");
    expect(markdown).toContain('<details><summary>Last lines of output</summary>');
  });

  it('the table: a line per scenario, the failed with their reasons, and the count', () => {
    const lines = table(report).split('\n');
    expect(lines[1]).toMatch(/^retry-after-503\s+passed\s+1\.5 s$/);
    expect(lines[2]).toMatch(/^reset-order\s+FAILED\s+0\.3 s {2}the command exited with code 1; idempotent-retries/);
    expect(lines.at(-1)).toBe('1 of 2 passed in 3.3 s');
  });
});
