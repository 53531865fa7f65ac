import type { CompileOptions, Graph } from '@hs/compiler';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import type { RunMetrics } from './run-metrics.js';
import type { RunSessionOptions } from './run-session-options.js';

/** Where a pipeline module writes lines of text: one call per line, without the trailing newline. */
export interface PipelineOutput {
  /** Normal output (help text). */
  readonly log: (line: string) => void;
  /** Diagnostics (usage errors). */
  readonly error: (line: string) => void;
}

/**
 * What a pipeline module's arguments ask for: a pipeline built from `options`, or to stop now with
 * `exitCode` because the module has already answered (its `--help`, or a usage error it printed).
 */
export type PipelineArguments<TOptions> =
  | {
      /** Build the pipeline. */
      readonly kind: 'build';
      /** The validated options `build()` takes. */
      readonly options: TOptions;
    }
  | {
      /** Stop without building. */
      readonly kind: 'exit';
      /** 0 after help, non-zero after a usage error the module printed. */
      readonly exitCode: number;
    };

/** Session options a pipeline may choose; the runner owns the metrics interval (it drives its status line). */
export type PipelineSessionOptions = Omit<RunSessionOptions, 'metricsIntervalMs'>;

/**
 * One built pipeline, not yet compiled: the graph with its operators' state, how to compile and run it,
 * and what to say when the run ended. A runner compiles `graph` with `compileOptions`, creates the session,
 * calls `prepareRun()` once (a plan-only runner never calls it; a session that cannot be created, such as
 * an unusable backend, never gets that far), runs the session, then prints `summary(metrics)`.
 */
export interface PipelineBuild {
  /** The graph, every operator added and every flow connected. */
  readonly graph: Graph;
  /** Options for `compile(graph, compileOptions)` (deployment bindings, stream policy); default none. */
  readonly compileOptions?: CompileOptions;
  /**
   * Options for `RunSession.create(plan, sessionOptions)`; default none (the backend then comes from
   * `HS_BACKEND`, then auto-detection).
   */
  readonly sessionOptions?: PipelineSessionOptions;
  /**
   * Frames the sources will emit in total (`RunMetrics.frames` at the end of a complete run), for a
   * progress bar; `undefined` when the run is open-ended or the count is not known in advance.
   */
  readonly expectedFrames?: number;
  /**
   * Side effects a run needs before its session runs (an output directory, for example), made once the
   * session was created; runs at most once.
   * @returns nothing; rejects with the `HsError` to report instead of running (`InvalidArgument` for an
   *   output directory that cannot be created, ...).
   */
  readonly prepareRun?: () => Promise<void>;
  /**
   * Lines to print after a successful run (what was written, figures computed by sinks). Return a
   * `Result` when the summary itself checks something that can fail (re-reading a written file): an
   * error makes the runner print `error: <message>` after the metrics and exit non-zero. Read it
   * through `pipelineSummary`, which accepts both forms.
   */
  readonly summary: (metrics: RunMetrics) => readonly string[] | Result<readonly string[]>;
}

/**
 * Calls `build.summary(metrics)` and gives its answer as a `Result`: plain lines become `ok(lines)`, a
 * returned `Result` passes through. What a runner calls after a successful run; an error must make the
 * runner exit non-zero.
 * @returns the lines, or the error the summary returned (e.g. `InvalidArgument` from a file that does
 *   not read back); a summary that throws propagates its exception.
 * @example
 * ```ts
 * import { Graph, compile } from '@hs/compiler';
 * import { RunSession, pipelineSummary, type PipelineBuild } from '@hs/runtime';
 *
 * const build: PipelineBuild = { graph: new Graph('nothing'), expectedFrames: 0, summary: (metrics) => [`ran ${metrics.operators.length} operators`] };
 * const plan = compile(build.graph);
 * if (!plan.ok) throw plan.error;
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (!session.ok) throw session.error;
 * const metrics = await session.value.run();
 * session.value.dispose();
 * const lines = pipelineSummary(build, metrics);
 * if (!lines.ok) throw lines.error; // a summary that checks something can fail: exit non-zero
 * for (const line of lines.value) console.log(line);
 * ```
 */
export function pipelineSummary(build: PipelineBuild, metrics: RunMetrics): Result<readonly string[]> {
  const answer = build.summary(metrics);
  return Array.isArray(answer) ? ok(answer as readonly string[]) : (answer as Result<readonly string[]>);
}

/**
 * The contract a graph module default-exports so that a generic runner (the `hs run` and `hs plan`
 * commands of `@hs/cli`) can load, build, inspect and run it. The module parses its own arguments (the
 * part of the command line after `--`), so each pipeline keeps its own options and validation.
 *
 * ```ts
 * const pipeline: PipelineModule<{ frames: number }> = {
 *   name: 'my-pipeline',
 *   description: 'Counts frames.',
 *   parseArguments: (args) => ok({ kind: 'build', options: { frames: 8 } }),
 *   build: async ({ frames }) => ({ graph: buildGraph(frames), expectedFrames: frames, summary: () => [] }),
 * };
 * export default pipeline;
 * ```
 */
export interface PipelineModule<TOptions = unknown> {
  /** Short name, as `hs run <name>` accepts it for a bundled example (lower-case words and dashes). */
  readonly name: string;
  /** One sentence saying what the pipeline does. */
  readonly description: string;
  /**
   * Parses and validates the module's own arguments (everything after `--`). Help and usage errors are
   * printed to `output` and answered with `{ kind: 'exit' }`.
   *
   * @returns the request, or the error for arguments that are well-formed but invalid (typically
   *   `ErrorCode.InvalidArgument` naming the option, its value and what is accepted).
   */
  parseArguments(args: readonly string[], output: PipelineOutput): Result<PipelineArguments<TOptions>>;
  /**
   * Builds the graph for `options`: loads inputs and adds operators, but allocates nothing on a device
   * and writes no files (that waits for `prepareRun()`).
   *
   * @returns the build.
   * @throws HsError (the promise rejects) with the failure to load the inputs (`InvalidArgument`,
   *   `NotFound`, ...); a runner reports it and exits non-zero.
   */
  build(options: TOptions): Promise<PipelineBuild>;
}

const NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/**
 * Checks that `value` (typically a module's default export) has the shape of a `PipelineModule`:
 * a `name` of lower-case words joined by dashes, a non-empty `description`, and `parseArguments` and
 * `build` functions. What the functions return is checked where they are called.
 *
 * @param source where the value came from (a file path), named in the error.
 * @returns the module, or `ErrorCode.InvalidArgument` naming the first member that is missing or wrong.
 * @example
 * ```ts
 * import { ErrorCode, ok } from '@hs/streams';
 * import { Graph } from '@hs/compiler';
 * import { checkPipelineModule, type PipelineModule } from '@hs/runtime';
 *
 * const pipeline: PipelineModule<{ frames: number }> = {
 *   name: 'count-frames',
 *   description: 'Counts frames.',
 *   parseArguments: () => ok({ kind: 'build', options: { frames: 8 } }),
 *   build: async ({ frames }) => ({ graph: new Graph('count'), expectedFrames: frames, summary: () => [`${frames} frames`] }),
 * };
 * console.log(`valid module: ${checkPipelineModule(pipeline, 'count-frames.js').ok}`);
 * const broken = checkPipelineModule({ name: 'Bad Name', description: 'x' }, 'broken.js');
 * console.log(broken.ok ? 'accepted' : `${broken.error.code === ErrorCode.InvalidArgument}: ${broken.error.message}`);
 * ```
 */
export function checkPipelineModule(value: unknown, source: string): Result<PipelineModule> {
  if (typeof value !== 'object' || value === null) {
    return err(ErrorCode.InvalidArgument, `${source}: the default export is not a pipeline module object (got ${value === null ? 'null' : typeof value}); export default a PipelineModule from @hs/runtime`);
  }
  const candidate = value as Record<string, unknown>;
  const name = candidate['name'];
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    return err(ErrorCode.InvalidArgument, `${source}: pipeline module 'name' must be lower-case words joined by dashes, got ${describe(name)}`);
  }
  const description = candidate['description'];
  if (typeof description !== 'string' || description.trim() === '') {
    return err(ErrorCode.InvalidArgument, `${source}: pipeline module '${name}' needs a non-empty 'description' string`);
  }
  for (const member of ['parseArguments', 'build'] as const) {
    if (typeof candidate[member] !== 'function') {
      return err(ErrorCode.InvalidArgument, `${source}: pipeline module '${name}' needs a '${member}' function, got ${describe(candidate[member])}`);
    }
  }
  return ok(value as PipelineModule);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}...` : value}'`;
  return value === null ? 'null' : typeof value;
}
