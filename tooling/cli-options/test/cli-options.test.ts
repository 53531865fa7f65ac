import { PassThrough } from 'node:stream';
import { Option } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { CliExit, createProgram, defaultOutDir, errorLines, parseNumberOption, parseOptions, processLines, refuseUnwritableExtension, resolveUserPath, userDirectory, withoutLeadingSeparators } from '../src/index.js';

describe('parseNumberOption: one number notation', () => {
  it.each([
    ['5e-2', 0.05],
    ['1e9', 1e9],
    ['0.25', 0.25],
    ['.5', 0.5],
    ['30', 30],
    ['+2.5E3', 2500],
    ['-1.5', -1.5],
  ])('accepts %s', (text, value) => {
    expect(parseNumberOption('--x', text, { min: -10, max: 1e10 })).toEqual({ ok: true, value });
  });

  it.each(['NaN', 'Infinity', '-Infinity', '1_000', '', ' 1', '1 ', '0x10', '1e', '1e400', '30hz', '1,5'])('refuses %j', (text) => {
    const parsed = parseNumberOption('--x', text, {});
    expect(parsed.ok ? undefined : parsed.error.message).toBe(`InvalidArgument: --x takes a finite number in standard notation (30, 0.25, 5e-2), got '${text}'`);
  });

  it('checks whole numbers and each kind of bound, naming them', () => {
    expect(parseNumberOption('--n', '1e3', { min: 1, max: 1000, integer: true })).toEqual({ ok: true, value: 1000 });
    const message = (text: string, range: Parameters<typeof parseNumberOption>[2]): string | undefined => {
      const parsed = parseNumberOption('--n', text, range);
      return parsed.ok ? undefined : parsed.error.message.replace(/ in standard notation.*/, '');
    };
    expect(message('2.5', { min: 1, max: 10, integer: true })).toBe('InvalidArgument: --n takes a whole number from 1 to 10');
    expect(message('11', { min: 1, max: 10 })).toBe('InvalidArgument: --n takes a finite number from 1 to 10');
    expect(message('0', { above: 0 })).toBe('InvalidArgument: --n takes a finite number above 0');
    expect(message('6', { above: 0, max: 5 })).toBe('InvalidArgument: --n takes a finite number above 0 and at most 5');
    expect(message('0', { min: 1 })).toBe('InvalidArgument: --n takes a finite number of at least 1');
    expect(message('9', { max: 5 })).toBe('InvalidArgument: --n takes a finite number of at most 5');
  });
});

describe('paths', () => {
  it('resolves against INIT_CWD when a package manager set it, else the working directory', () => {
    expect(userDirectory({ INIT_CWD: '/home/user/project' }, '/repo/examples/x')).toBe('/home/user/project');
    expect(userDirectory({}, '/repo/examples/x')).toBe('/repo/examples/x');
    expect(userDirectory({ INIT_CWD: '' }, '/repo')).toBe('/repo');
    expect(userDirectory({ INIT_CWD: 'relative' }, '/repo')).toBe('/repo');
    expect(resolveUserPath('scans/a.ply', { INIT_CWD: '/home/user' }, '/repo')).toBe('/home/user/scans/a.ply');
    expect(resolveUserPath('/abs/a.ply', { INIT_CWD: '/home/user' }, '/repo')).toBe('/abs/a.ply');
    expect(defaultOutDir('scan-to-volume', { INIT_CWD: '/home/user' }, '/repo')).toBe('/home/user/out/scan-to-volume');
  });
});

describe('programs', () => {
  const collect = () => {
    const log: string[] = [];
    const error: string[] = [];
    return { log, error, output: { log: (line: string) => log.push(line), error: (line: string) => error.push(line) } };
  };

  it('drops standalone -- and answers usage errors with exit 2, "<program>: <message>" and the hint line', () => {
    const { error, output } = collect();
    const program = createProgram('demo', 'A demo.', output).addOption(new Option('--size <n>').default('1'));
    expect(parseOptions(program, ['--', '--size', '3', '--'])).toBeNull();
    expect(program.opts()).toEqual({ size: '3' });
    expect(parseOptions(createProgram('demo', 'A demo.', output), ['--sise', '3'])).toBe(CliExit.Usage);
    expect(error).toEqual(["demo: unknown option '--sise'", 'hint: demo --help lists the options']);
  });

  it('answers --help with exit 0 on the log', () => {
    const { log, output } = collect();
    expect(parseOptions(createProgram('demo', 'A demo.', output), ['--help'])).toBe(CliExit.Success);
    expect(log.join('\n')).toMatch(/^Usage: demo \[options\]\n\nA demo\./);
  });

  it('drops only the leading separators when the rest is split at --', () => {
    expect(withoutLeadingSeparators(['--', '--', 'run', 'x', '--', '--n', '1'])).toEqual(['run', 'x', '--', '--n', '1']);
  });

  it('formats errors as "<program>: <message>" with an optional hint line', () => {
    expect(errorLines('hs', 'NotFound: /abs/x.ply')).toEqual(['hs: NotFound: /abs/x.ply']);
    expect(errorLines('hs', 'bad', 'hint: try this')).toEqual(['hs: bad', 'hint: try this']);
  });

  it('refuses an output extension the command cannot write, naming the ones it can', () => {
    expect(refuseUnwritableExtension('-o', '/tmp/plan.svg', ['.svg', '.txt'])).toEqual({ ok: true, value: '/tmp/plan.svg' });
    expect(refuseUnwritableExtension('-o', '/tmp/plan', ['.svg'])).toEqual({ ok: true, value: '/tmp/plan' });
    const refused = refuseUnwritableExtension('-o', '/tmp/plan.PNG', ['.svg', '.txt']);
    expect(refused.ok ? undefined : refused.error.message).toBe('InvalidArgument: -o /tmp/plan.PNG: cannot write a .png file; use one of .svg, .txt');
  });
});

describe('processLines', () => {
  it('ends the process once with the exit code so far when a reader goes away (EPIPE), writing nothing more', () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const written: string[] = [];
    stdout.on('data', (chunk: Buffer) => written.push(chunk.toString()));
    const exit = vi.fn();
    const lines = processLines(stdout, stderr, exit);
    lines.log('first');
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    stdout.emit('error', epipe);
    stderr.emit('error', epipe);
    lines.log('second');
    lines.error('never');
    expect(exit).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(0);
    expect(written).toEqual(['first\n']);
  });

  it('rethrows other stream errors', () => {
    const stdout = new PassThrough();
    processLines(stdout, new PassThrough(), vi.fn());
    expect(() => stdout.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }))).toThrow('write EIO');
  });
});
