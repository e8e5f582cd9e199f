/** One thing `berth doctor` looked at, and what it found, in words an operator can act on. */
export type CheckResult = Readonly<{
  name: string;
  ok: boolean;
  /** What was found (ok) or what is wrong and what to do about it (not ok). */
  detail: string;
}>;

/** `ok   name        detail` lines, then one closing line. */
export function renderReport(results: readonly CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length));
  const lines = results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'}  ${r.name.padEnd(width)}  ${r.detail}`);
  const failed = results.filter((r) => !r.ok).length;
  lines.push('', failed === 0 ? 'Everything Berth needs answers.' : `${failed} of ${results.length} checks failed.`);
  return lines.join('\n');
}
