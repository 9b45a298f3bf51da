import type { Verdict } from './scenario-run.js';

/** What a run came to, for the reports. */
export interface RunReport {
  url: string;
  command: string;
  catalogueVersion: string;
  verdicts: Verdict[];
  seconds: number;
  /** When the run started (ISO 8601). */
  startedAt: string;
}

const seconds = (value: number) => value.toFixed(1);

/** Characters XML 1.0 cannot hold (control characters but tab and line ends): dropped. */
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

/** Text as XML holds it: what it cannot hold dropped, the five characters it reserves escaped. */
const xml = (text: string) => text.replace(NOT_XML, '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JUnit XML, as CI systems read it: one test suite, a test case per scenario, a failure with its reasons. */
export function junitXml(report: RunReport): string {
  const failures = report.verdicts.filter((verdict) => !verdict.passed).length;
  const cases = report.verdicts.map((verdict) => {
    const head = `    <testcase classname="petstore.conformance" name="${xml(verdict.id)}" time="${seconds(verdict.seconds)}">`;
    const output = verdict.tail.length ? `\n      <system-out>${xml(verdict.tail.join('\n'))}</system-out>` : '';
    if (verdict.passed) return `${head}${output}\n    </testcase>`;
    const failure =
      `\n      <failure message="${xml(verdict.reasons[0] ?? 'failed')}" type="conformance">` +
      `${xml(verdict.reasons.join('\n'))}</failure>`;
    return `${head}${failure}${output}\n    </testcase>`;
  });
  const counts = `tests="${report.verdicts.length}" failures="${failures}" errors="0" skipped="0" time="${seconds(report.seconds)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="petstore conformance" ${counts}>`,
    `  <testsuite name="petstore conformance ${xml(report.catalogueVersion)}" ${counts} timestamp="${report.startedAt}">`,
    `    <properties>\n      <property name="url" value="${xml(report.url)}"/>\n      <property name="command" value="${xml(report.command)}"/>\n    </properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A Markdown summary, fit for a CI job's summary (`$GITHUB_STEP_SUMMARY`): a table, then each failure's reasons. */
export function markdownSummary(report: RunReport): string {
  const passed = report.verdicts.filter((verdict) => verdict.passed).length;
  const lines = [
    `## Petstore conformance: ${passed} of ${report.verdicts.length} scenarios passed`,
    '',
    `Catalogue ${report.catalogueVersion}, \`${cell(report.command)}\` against ${report.url}, ${seconds(report.seconds)} s.`,
    '',
    '| Scenario | Result | Time | Why |',
    '| --- | --- | --- | --- |',
    ...report.verdicts.map(
      (verdict) =>
        `| [${verdict.id}](${report.url}/scenarios/${verdict.id}) | ${verdict.passed ? '✅ passed' : '❌ failed'} | ` +
        `${seconds(verdict.seconds)} s | ${cell(verdict.reasons[0] ?? '')} |`,
    ),
  ];
  for (const verdict of report.verdicts.filter((each) => !each.passed)) {
    lines.push('', `### ${verdict.id}: ${verdict.title}`, '', ...verdict.reasons.map((reason) => `- ${reason}`));
    if (verdict.tail.length)
      lines.push(
        '',
        '<details><summary>Last lines of output</summary>',
        '',
        '```',
        ...verdict.tail,
        '```',
        '',
        '</details>',
      );
  }
  return `${lines.join('\n')}\n`;
}

/** The table printed at the end of a run. */
export function table(report: RunReport): string {
  const width = Math.max(8, ...report.verdicts.map((verdict) => verdict.id.length));
  const rows = report.verdicts.map(
    (verdict) =>
      `${verdict.id.padEnd(width)}  ${verdict.passed ? 'passed' : 'FAILED'}  ${seconds(verdict.seconds).padStart(6)} s` +
      (verdict.passed ? '' : `  ${verdict.reasons.join('; ')}`),
  );
  const passed = report.verdicts.filter((verdict) => verdict.passed).length;
  return [
    `${'scenario'.padEnd(width)}  result    time`,
    ...rows,
    `${passed} of ${report.verdicts.length} passed in ${seconds(report.seconds)} s`,
  ].join('\n');
}
