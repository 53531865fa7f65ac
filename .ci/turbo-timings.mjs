#!/usr/bin/env node
// Prints per-task wall times from the run summaries turbo wrote (.ci/run sets TURBO_RUN_SUMMARY=true, the
// same as `turbo run --summarize`: one .turbo/runs/<id>.json per `turbo run`). Usage:
//   node .ci/turbo-timings.mjs <marker> [step]
// reads the summaries newer than the file <marker> and prints, per summary, every `test` task and the
// slowest other tasks, slowest first, as `::: task <step> <package>#<task>: <s> s (<cache>, exit <code>)`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [marker, step = 'turbo'] = process.argv.slice(2);
const others = Number(process.env.HS_CI_SLOWEST ?? 8);
const dir = '.turbo/runs';
const since = marker !== undefined && existsSync(marker) ? statSync(marker).mtimeMs : 0;
const files = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => join(dir, f))
      .filter((f) => statSync(f).mtimeMs >= since)
      .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
  : [];
if (files.length === 0) console.log(`::: turbo ${step}: no run summary under ${dir}`);
for (const file of files) {
  let summary;
  try {
    summary = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    console.log(`::: turbo ${step}: ${file} unreadable (${error.message})`);
    continue;
  }
  const run = summary.execution ?? {};
  const seconds = (ms) => (ms / 1000).toFixed(1);
  console.log(`::: turbo ${step}: \`${run.command}\` ${seconds((run.endTime ?? 0) - (run.startTime ?? 0))} s, ${run.attempted ?? '?'} tasks (${run.cached ?? 0} cached, ${run.failed ?? 0} failed), ${file}`);
  const tasks = (summary.tasks ?? [])
    .filter((t) => t.execution?.startTime !== undefined && t.execution?.endTime !== undefined)
    .map((t) => ({ id: t.taskId, task: t.task, ms: t.execution.endTime - t.execution.startTime, cache: t.cache?.status ?? '?', exit: t.execution.exitCode }))
    .sort((a, b) => b.ms - a.ms);
  const tests = tasks.filter((t) => t.task === 'test');
  const rest = tasks.filter((t) => t.task !== 'test').slice(0, others);
  for (const t of [...tests, ...rest]) console.log(`::: task ${step} ${t.id}: ${seconds(t.ms)} s (${t.cache}, exit ${t.exit ?? '?'})`);
}
