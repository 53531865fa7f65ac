import { Graph } from '@hs/compiler';
import { ErrorCode, err, ok } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { type PipelineBuild, type PipelineModule, type RunMetrics, checkPipelineModule, pipelineSummary } from '../src/index.js';

const valid: PipelineModule<{ frames: number }> = {
  name: 'count-frames',
  description: 'Counts frames.',
  parseArguments: () => ok({ kind: 'build', options: { frames: 3 } }),
  build: async ({ frames }) => ({ graph: new Graph('count'), expectedFrames: frames, summary: () => [] }),
};

describe('checkPipelineModule', () => {
  it('accepts a module with every member and returns it unchanged', () => {
    const checked = checkPipelineModule(valid, 'count.js');
    expect(checked.ok && checked.value).toBe(valid);
  });

  it.each([
    [undefined, "count.js: the default export is not a pipeline module object (got undefined); export default a PipelineModule from @hs/runtime"],
    [null, 'count.js: the default export is not a pipeline module object (got null); export default a PipelineModule from @hs/runtime'],
    [{ ...valid, name: 'Count Frames' }, "count.js: pipeline module 'name' must be lower-case words joined by dashes, got 'Count Frames'"],
    [{ ...valid, name: 7 }, "count.js: pipeline module 'name' must be lower-case words joined by dashes, got number"],
    [{ ...valid, description: '  ' }, "count.js: pipeline module 'count-frames' needs a non-empty 'description' string"],
    [{ ...valid, parseArguments: 'no' }, "count.js: pipeline module 'count-frames' needs a 'parseArguments' function, got 'no'"],
    [{ ...valid, build: undefined }, "count.js: pipeline module 'count-frames' needs a 'build' function, got undefined"],
  ])('rejects %j with InvalidArgument naming the member', (value, message) => {
    const checked = checkPipelineModule(value, 'count.js');
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.error.code).toBe(ErrorCode.InvalidArgument);
    expect(checked.error.message).toContain(message);
  });

  it('shortens a long bad name in the message', () => {
    const checked = checkPipelineModule({ ...valid, name: 'X'.repeat(100) }, 'm.js');
    expect(!checked.ok && checked.error.message).toContain(`got '${'X'.repeat(40)}...'`);
  });
});

describe('pipelineSummary', () => {
  const metrics = {} as RunMetrics;
  const build = (summary: PipelineBuild['summary']): PipelineBuild => ({ graph: new Graph('count'), expectedFrames: 1, summary });

  it('gives plain lines as ok(lines)', () => {
    expect(pipelineSummary(build(() => ['a', 'b']), metrics)).toEqual(ok(['a', 'b']));
  });

  it('passes a returned Result through, lines or error', () => {
    expect(pipelineSummary(build(() => ok(['c'])), metrics)).toEqual(ok(['c']));
    const failed = pipelineSummary(build(() => err(ErrorCode.InvalidArgument, 'out/volume.nvdb: bad magic')), metrics);
    expect(failed.ok).toBe(false);
    if (!failed.ok) expect(failed.error.message).toBe('InvalidArgument: out/volume.nvdb: bad magic');
  });
});
