import type { CliIo } from './cli-io.js';
import { type DoctorReport, runDoctorChecks } from './doctor-checks.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';

/**
 * `hs doctor`: prints every check (`ok`, `missing` or `failed`, what was found, and for each missing or
 * failed piece what to do), or the report as JSON with `json`.
 *
 * @returns `ExitCode.Success` when the host backend works (hs can run everything there), else `ExitCode.Failure`.
 */
export async function doctorCommand(options: { readonly json: boolean }, io: CliIo): Promise<ExitCodeValue> {
  const report = await runDoctorChecks(io.env, io.cwd);
  if (options.json) io.out(JSON.stringify(report, null, 2));
  else for (const line of formatDoctorReport(report)) io.out(line);
  return report.hostBackendWorks ? ExitCode.Success : ExitCode.Failure;
}

/** The report as aligned lines: `ok      backend: host (chosen by auto-detection)`, with `to do:` lines under problems. */
export function formatDoctorReport(report: DoctorReport): string[] {
  const lines = ['hs doctor'];
  for (const check of report.checks) {
    lines.push(`  ${check.status.padEnd(8)}${check.name}: ${check.detail}`);
    if (check.todo !== undefined) lines.push(`  ${''.padEnd(8)}to do: ${check.todo}`);
  }
  if (!report.hostBackendWorks) lines.push('hs cannot run here: the host backend failed');
  else if (report.backend === undefined) lines.push('the host backend works, but the backend selection failed (see above)');
  else lines.push(`hs runs here on the ${report.backend} backend`);
  return lines;
}
