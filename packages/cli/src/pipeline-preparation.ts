import { type ExecutionPlan, Graph, compile } from '@hs/compiler';
import type { PipelineBuild } from '@hs/runtime';
import { HsError, type Result } from '@hs/streams';
import type { CliIo } from './cli-io.js';
import { usageHint } from '@hs/cli-options';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { type LoadedPipelineModule, loadPipelineModule } from './module-loader.js';

/** A pipeline module loaded, its arguments parsed, its graph built and compiled. */
export interface PreparedPipeline {
  readonly loaded: LoadedPipelineModule;
  readonly build: PipelineBuild;
  readonly plan: ExecutionPlan;
}

/**
 * The steps `hs run` and `hs plan` share: load the module `target` names, let it parse `moduleArgs`,
 * build its graph and compile it with the build's compile options. Every failure is printed to `io.err`
 * as `hs: <ErrorCode>: <message>`, a usage error with a hint naming `command`'s help.
 *
 * @returns the prepared pipeline, or the exit code to stop with: `ExitCode.Usage` for a module that
 *   cannot be loaded or arguments it rejected (`ExitCode.Success` after its own `--help`),
 *   `ExitCode.Failure` when building or compiling fails (`build()` rejected), `parseArguments()` returns
 *   something that is not a `Result` or `build()` resolves something that is not a `PipelineBuild` (named
 *   in the message), or either throws something other than an `HsError` (one line naming the function,
 *   the error and the first stack frame; no stack trace).
 */
export async function preparePipeline(
  command: 'hs run' | 'hs plan',
  target: string,
  moduleArgs: readonly string[],
  io: CliIo,
): Promise<{ readonly ok: true; readonly value: PreparedPipeline } | { readonly ok: false; readonly exitCode: ExitCodeValue }> {
  let loaded: LoadedPipelineModule;
  try {
    loaded = await loadPipelineModule(target, io.cwd);
  } catch (thrown) {
    return fail(io, command, (thrown as HsError).message, ExitCode.Usage);
  }
  const { module } = loaded;
  let request: ReturnType<typeof module.parseArguments>;
  try {
    request = module.parseArguments(moduleArgs, { log: io.out, error: io.err });
  } catch (thrown) {
    return fail(io, command, thrownMessage(module.name, 'parseArguments()', thrown), ExitCode.Failure);
  }
  if (!isResult(request)) return fail(io, command, `InvalidArgument: ${module.name}: parseArguments() did not return a Result (ok/err from @hs/streams)`, ExitCode.Failure);
  if (!request.ok) return fail(io, command, request.error.message, ExitCode.Usage);
  if (request.value.kind === 'exit') return { ok: false, exitCode: request.value.exitCode === 0 ? ExitCode.Success : ExitCode.Usage };
  let build: PipelineBuild;
  try {
    build = await module.build(request.value.options);
  } catch (thrown) {
    return fail(io, command, thrownMessage(module.name, 'build()', thrown), ExitCode.Failure);
  }
  if (isResult(build)) {
    return fail(io, command, `InvalidArgument: ${module.name}: build() resolved a Result; it resolves the PipelineBuild itself and rejects with an HsError`, ExitCode.Failure);
  }
  if (typeof build !== 'object' || build === null || typeof build.summary !== 'function') {
    return fail(io, command, `InvalidArgument: ${module.name}: build() must give a PipelineBuild with a graph and a summary function`, ExitCode.Failure);
  }
  if (!(build.graph instanceof Graph)) {
    return fail(
      io,
      command,
      `InvalidArgument: ${module.name}: build() gave a graph that is not a Graph of the @hs/compiler hs uses; ` +
        'build it with new Graph() and install @hs/cli in the same project as the module\'s @hs/compiler',
      ExitCode.Failure,
    );
  }
  const plan = compile(build.graph, build.compileOptions);
  if (!plan.ok) return fail(io, command, plan.error.message, ExitCode.Failure);
  return { ok: true, value: { loaded, build, plan: plan.value } };
}

/** Whether a module's return value has the shape of a `Result` (`ok: true` with `value`, or `ok: false` with an error). */
function isResult(value: unknown): value is Result<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { ok?: unknown; error?: unknown };
  return candidate.ok === true || (candidate.ok === false && candidate.error instanceof Error);
}

/**
 * One line for an exception a module's function threw: an `HsError`'s own message, otherwise
 * `InvalidState: <module>: <what> threw <name>: <first message line> (at <file:line:column of the first stack frame>)`.
 */
function thrownMessage(moduleName: string, what: string, thrown: unknown): string {
  if (thrown instanceof HsError) return thrown.message;
  if (!(thrown instanceof Error)) return `InvalidState: ${moduleName}: ${what} threw ${String(thrown)}`;
  const frame = thrown.stack?.split('\n').find((line) => line.trimStart().startsWith('at '))?.trim().slice(3);
  const where = frame === undefined ? '' : ` (at ${/\(([^()]+)\)$/.exec(frame)?.[1] ?? frame})`;
  return `InvalidState: ${moduleName}: ${what} threw ${thrown.name}: ${thrown.message.split('\n')[0]}${where}`;
}

/** Prints `message`; under a usage error, the hint saying where `command`'s and the module's options are listed. */
function fail(io: CliIo, command: 'hs run' | 'hs plan', message: string, exitCode: ExitCodeValue): { readonly ok: false; readonly exitCode: ExitCodeValue } {
  io.err(`hs: ${message}`);
  if (exitCode === ExitCode.Usage) io.err(`${usageHint(command)} of hs; the module's own go after --, listed by -- --help`);
  return { ok: false, exitCode };
}
