import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/index.js';
import { FIXTURE, PACKAGE_DIR, hs, spawnHs } from './run-hs.js';

/** The hint line under a usage error of a module (`hs run`/`hs plan`). */
const USAGE_HINT = "hint: hs plan --help lists the options of hs; the module's own go after --, listed by -- --help"; // hs plan's, not hs run's

interface SvgGroup {
  '@_class'?: string;
  title?: string;
  g?: SvgGroup | SvgGroup[];
  text?: unknown;
}

/** Every `<g>` of the parsed SVG, depth first, as { class, title, texts }. */
function groups(svg: string): { cls: string; title: string; texts: string[] }[] {
  const parser = new XMLParser({ ignoreAttributes: false, htmlEntities: true, isArray: (name) => name === 'g' || name === 'text' });
  const doc = parser.parse(svg) as { svg: { g: SvgGroup[] } };
  const found: { cls: string; title: string; texts: string[] }[] = [];
  const visit = (g: SvgGroup): void => {
    const texts = ((g.text as unknown[] | undefined) ?? []).map((t) => String(typeof t === 'object' && t !== null ? (t as Record<string, unknown>)['#text'] : t));
    found.push({ cls: g['@_class'] ?? '', title: String(g.title ?? ''), texts });
    for (const child of (g.g as SvgGroup[] | undefined) ?? []) visit(child);
  };
  for (const g of doc.svg.g) visit(g);
  return found;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-plan-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('hs plan', () => {
  it('draws partitions as clusters, operators and pools as nodes, flows and pool ties as edges (SVG parsed)', async () => {
    const { exitCode, out } = await hs(['plan', FIXTURE, '--svg']);
    expect(exitCode).toBe(ExitCode.Success);
    const all = groups(out.join('\n'));
    const clusters = all.filter((g) => g.cls === 'cluster');
    expect(clusters.map((c) => c.title).sort()).toEqual(['cluster_0', 'cluster_1', 'cluster_2']);
    expect(clusters.flatMap((c) => c.texts)).toEqual(
      expect.arrayContaining(['partition:source: stream:source@cuda:0', 'partition:checker: stream:checker@cuda:0', 'partition:monitor: stream:monitor@cuda:0']),
    );
    const nodes = all.filter((g) => g.cls === 'node');
    expect(nodes.map((n) => n.title).sort()).toEqual(['add-one', 'checker', 'monitor', 'pool:add-one.output', 'pool:source.frames', 'source']);
    const pool = nodes.find((n) => n.title === 'pool:add-one.output');
    expect(pool?.texts).toEqual(expect.arrayContaining(['256 B x 6 = 1536 B', 'slotCount = 3 (maxConsumerQueueDepth)', '+ 1 (producerLoan) = 6']));
    expect(nodes.find((n) => n.title === 'checker')?.texts).toEqual(['checker', 'cuda:0', 'stream:checker@cuda:0']);
    const edges = all.filter((g) => g.cls === 'edge');
    expect(edges.map((e) => e.title).sort()).toEqual([
      'add-one->checker',
      'add-one->monitor',
      'add-one->pool:add-one.output',
      'source->add-one',
      'source->pool:source.frames',
    ]);
    expect(edges.find((e) => e.title === 'source->add-one')?.texts).toContain('fused (no fences)');
    expect(edges.find((e) => e.title === 'add-one->monitor')?.texts).toContain('drop policy dropOldest');
  });

  it('prints text, canonical JSON and DOT, the default being text', async () => {
    const text = await hs(['plan', FIXTURE]);
    expect(text.exitCode).toBe(0);
    expect(text.out.join('\n')).toContain('source.frames->add-one.input: queueDepth 2 (explicit), pool pool:source.frames, fused');
    const json = await hs(['plan', FIXTURE, '--json']);
    const parsed = JSON.parse(json.out.join('\n')) as { name: string; pools: { id: string; slotCount: number }[] };
    expect(parsed.name).toBe('counting');
    expect(parsed.pools.map((p) => [p.id, p.slotCount])).toEqual([
      ['pool:source.frames', 5],
      ['pool:add-one.output', 6],
    ]);
    const dot = await hs(['plan', FIXTURE, '--dot']);
    expect(dot.out.join('\n').split('\n')[0]).toBe('digraph "counting" {');
  });

  it('passes module arguments after -- and writes an HTML page with the SVG inline to -o', async () => {
    const file = join(dir, 'plan.html');
    const { exitCode, err } = await hs(['plan', FIXTURE, '--html', '-o', file, '--', '--frames', '3']);
    expect(exitCode).toBe(0);
    expect(err).toEqual([`wrote the html plan of counting-pipeline to ${file}`]);
    const html = await readFile(file, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('<title>hs plan: counting-pipeline</title>');
    expect(html).toMatch(/<figure><svg[^>]*>[\s\S]*<\/svg>\s*<\/figure>/);
    expect(html).toContain('source.frames-&gt;add-one.input');
    expect(html).not.toContain('<?xml');
  });

  it.each([
    ['plan.svg', 'svg', (text: string) => expect(text).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*<\/svg>\n$/)],
    ['PLAN.HTML', 'html', (text: string) => expect(text.startsWith('<!DOCTYPE html>')).toBe(true)],
    ['plan.dot', 'dot', (text: string) => expect(text.startsWith('digraph "counting" {')).toBe(true)],
    ['plan.json', 'json', (text: string) => expect(JSON.parse(text)).toMatchObject({ name: 'counting' })],
    ['plan.txt', 'text', (text: string) => expect(text).toContain('source.frames->add-one.input: queueDepth 2')],
    ['plan', 'text', (text: string) => expect(text).toContain('source.frames->add-one.input: queueDepth 2')],
  ])('without a format flag, -o %s picks the format %s from its extension', async (name, format, check) => {
    const file = join(dir, `by-extension-${name}`);
    const { exitCode, err } = await hs(['plan', FIXTURE, '-o', file]);
    expect({ exitCode, err }).toEqual({ exitCode: ExitCode.Success, err: [`wrote the ${format} plan of counting-pipeline to ${file}`] });
    check(await readFile(file, 'utf8'));
  });

  it.each(['plan.png', 'plan.out', 'plan.PDF'])('refuses -o %s without a format flag, an extension no format writes, with exit code 2, writing nothing', async (name) => {
    const file = join(dir, `unwritable-${name}`);
    const { exitCode, out, err } = await hs(['plan', FIXTURE, '-o', file]);
    expect({ exitCode, out, err }).toEqual({
      exitCode: ExitCode.Usage,
      out: [],
      err: [`hs: InvalidArgument: -o ${file}: cannot write a ${extname(name).toLowerCase()} file; use one of .txt, .json, .dot, .svg, .html`, 'hint: hs plan --help lists the options'],
    });
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a format flag that contradicts the -o extension with exit code 2, writing nothing', async () => {
    const file = join(dir, 'contradiction.svg');
    const { exitCode, out, err } = await hs(['plan', FIXTURE, '--text', '-o', file]);
    expect({ exitCode, out, err }).toEqual({
      exitCode: ExitCode.Usage,
      out: [],
      err: [`hs: InvalidArgument: --text renders text, but the extension of -o ${file} asks for svg; drop --text (the extension picks the format) or write to a .txt file`, 'hint: hs plan --help lists the options'],
    });
    await expect(readFile(file, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    const agreeing = join(dir, 'agreeing.svg');
    expect((await hs(['plan', FIXTURE, '--svg', '-o', agreeing])).exitCode).toBe(ExitCode.Success);
    const unnamed = join(dir, 'unnamed.plan');
    expect((await hs(['plan', FIXTURE, '--json', '-o', unnamed])).exitCode).toBe(ExitCode.Success);
    expect(JSON.parse(await readFile(unnamed, 'utf8'))).toMatchObject({ name: 'counting' });
  });

  it('draws the image-pipeline example by name from inside the checkout', async () => {
    const { exitCode, out } = await hs(['plan', 'image-pipeline', '--svg']);
    expect(exitCode).toBe(0);
    const nodes = groups(out.join('\n')).filter((g) => g.cls === 'node').map((n) => n.title);
    expect(nodes).toEqual(expect.arrayContaining(['source', 'grayscale', 'downscale', 'png-writer', 'statistics', 'pool:grayscale.gray']));
  });

  it('draws the sensor-fusion example: its four operators and the IMU edge sized 34 from the rates', async () => {
    const { exitCode, out } = await hs(['plan', 'sensor-fusion', '--svg']);
    expect(exitCode).toBe(0);
    const drawn = groups(out.join('\n'));
    const nodes = drawn.filter((g) => g.cls === 'node').map((n) => n.title);
    expect(nodes).toEqual(expect.arrayContaining(['camera', 'imu', 'fusion', 'recorder', 'pool:imu.samples']));
    const edge = (title: string) => drawn.find((g) => g.cls === 'edge' && g.title === title)?.texts;
    expect(edge('imu->fusion')).toEqual(expect.arrayContaining(['samples -> imu', 'queue 34 (automatic)']));
    expect(edge('fusion->recorder')).toEqual(expect.arrayContaining(['queue 4 (explicit)', 'drop policy dropOldest']));
  });

  it('answers usage errors with exit code 2 and one line saying what to do', async () => {
    const both = await hs(['plan', FIXTURE, '--svg', '--dot']);
    expect(both.exitCode).toBe(ExitCode.Usage);
    expect(both.err).toEqual(["hs: option '--dot' cannot be used with option '--svg'", 'hint: hs plan --help lists the options']);
    const missing = await hs(['plan', 'no-such-example']);
    expect(missing.exitCode).toBe(ExitCode.Usage);
    expect(missing.err[0]).toMatch(/^hs: NotFound: no example 'no-such-example' in examples\/ of .* \(known examples: .*image-pipeline.*\); give a path/);
    const ts = await hs(['plan', 'src/index.ts']);
    expect(ts.err).toEqual([expect.stringMatching(/^hs: InvalidArgument: .*index\.ts is TypeScript source: build it to JavaScript first/), USAGE_HINT]);
    const notModule = await hs(['plan', 'test/fixtures/not-a-pipeline.mjs']);
    expect(notModule.exitCode).toBe(ExitCode.Usage);
    expect(notModule.err).toEqual([expect.stringMatching(/not-a-pipeline\.mjs: the default export is not a pipeline module object \(got number\)/), USAGE_HINT]);
    const badArgs = await hs(['plan', FIXTURE, '--', '--frames', 'x']);
    expect(badArgs).toMatchObject({ exitCode: ExitCode.Usage, err: ['hs: InvalidArgument: --frames must be a positive number', USAGE_HINT] });
  });

  it('reports a build failure with exit code 1 and an unwritable -o with exit code 1', async () => {
    const build = await hs(['plan', FIXTURE, '--', '--fail-build']);
    expect(build).toMatchObject({ exitCode: ExitCode.Failure, err: ['hs: NotFound: input points.ply does not exist'] });
    const file = join(dir, 'missing-dir', 'plan.svg');
    const write = await hs(['plan', FIXTURE, '--svg', '-o', file]);
    expect(write).toMatchObject({ exitCode: ExitCode.Failure, err: [`hs: NotFound: cannot write ${file} (ENOENT); choose a writable file with -o`] });
  });

  it('replaces a symlink planted at -o (its target untouched) and refuses -o in a symlinked folder', async () => {
    const victim = join(dir, 'victim');
    await writeFile(victim, 'precious');
    const file = join(dir, 'planted.dot');
    await symlink(victim, file);
    expect((await hs(['plan', FIXTURE, '--dot', '-o', file])).exitCode).toBe(ExitCode.Success);
    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect((await lstat(file)).isFile()).toBe(true);
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'linked'));
    const linked = await hs(['plan', FIXTURE, '--dot', '-o', join(dir, 'linked', 'plan.dot')]);
    expect(linked).toMatchObject({ exitCode: ExitCode.Failure, err: [expect.stringMatching(/^hs: InvalidArgument: output folder .*linked' is a symbolic link/)] });
  });

  it('works as the built bin', async () => {
    const { code, stdout } = await spawnHs(['plan', FIXTURE, '--dot']);
    expect(code).toBe(0);
    expect(stdout).toContain('"source" -> "add-one"');
  });
});

describe('hs plan of the flagship (scan-to-volume)', () => {
  it('exits as hs --help says: 2 for arguments the module rejects, 1 for an input file that is missing', async () => {
    const help = await hs(['--help']);
    expect(help.exitCode).toBe(ExitCode.Success);
    const text = help.out.join('\n');
    expect(text).toMatch(/Exit codes:\n {2}0 {4}done[^\n]*\n {2}1 {4}the work failed after the command line was accepted: a missing or\n {7}unreadable input file/);
    expect(text).toMatch(/\n {2}2 {4}the command line was wrong, found before any work starts/);
    expect(text).toMatch(/\n {2}130 {2}hs run stopped by Ctrl-C/);
    expect(await hs(['plan', 'scan-to-volume', '--', '--voxel-size', '-1'])).toMatchObject({
      exitCode: ExitCode.Usage,
      err: [expect.stringMatching(/^hs: InvalidArgument: --voxel-size .*'-1'/), USAGE_HINT],
    });
    const missing = join(dir, 'nope.ply');
    expect(await hs(['plan', 'scan-to-volume', '--', '--input', missing])).toMatchObject({
      exitCode: ExitCode.Failure,
      err: [expect.stringMatching(/^hs: NotFound: .*nope\.ply/)],
    });
  });

  it('draws every partition, operator, pool and edge of its compiled plan in the SVG of the HTML page', async () => {
    const json = await hs(['plan', 'scan-to-volume', '--json']);
    expect(json.exitCode).toBe(0);
    const plan = JSON.parse(json.out.join('\n')) as {
      partitions: unknown[];
      operators: { name: string }[];
      pools: { id: string; producer: { operator: string } }[];
      edges: { producer: { operator: string }; consumer: { operator: string } }[];
    };
    const file = join(dir, 'scan-to-volume.html');
    expect((await hs(['plan', 'scan-to-volume', '--html', '-o', file])).exitCode).toBe(0);
    const html = await readFile(file, 'utf8');
    const svg = html.slice(html.indexOf('<svg'), html.indexOf('</svg>') + '</svg>'.length);
    const all = groups(svg);
    expect(all.filter((g) => g.cls === 'cluster')).toHaveLength(plan.partitions.length);
    const nodes = all.filter((g) => g.cls === 'node').map((n) => n.title);
    expect(nodes.sort()).toEqual([...plan.operators.map((o) => o.name), ...plan.pools.map((p) => p.id)].sort());
    expect(nodes).toEqual(expect.arrayContaining(['scan-source', 'points-to-grid', 'nvdb-writer', 'png-writer']));
    const edges = all.filter((g) => g.cls === 'edge').map((e) => e.title);
    expect(edges.sort()).toEqual(
      [...plan.edges.map((e) => `${e.producer.operator}->${e.consumer.operator}`), ...plan.pools.map((p) => `${p.producer.operator}->${p.id}`)].sort(),
    );
  });
});

describe('modules that return the wrong values', () => {
  const broken = join(PACKAGE_DIR, 'test', 'fixtures', 'broken-results.mjs');
  it.each([
    ['--raw-parse', 'hs: InvalidArgument: broken-results: parseArguments() did not return a Result (ok/err from @hs/streams)'],
    ['--result-build', 'hs: InvalidArgument: broken-results: build() resolved a Result; it resolves the PipelineBuild itself and rejects with an HsError'],
    ['--no-summary', 'hs: InvalidArgument: broken-results: build() must give a PipelineBuild with a graph and a summary function'],
    [
      '--no-graph',
      "hs: InvalidArgument: broken-results: build() gave a graph that is not a Graph of the @hs/compiler hs uses; build it with new Graph() and install @hs/cli in the same project as the module's @hs/compiler",
    ],
  ])('%s is a typed failure with exit code 1, not a crash', async (flag, message) => {
    expect(await hs(['plan', broken, '--', flag])).toMatchObject({ exitCode: ExitCode.Failure, err: [message] });
  });

  it.each([
    ['--throw-parse', /^hs: InvalidState: broken-results: parseArguments\(\) threw TypeError: parse boom \(at [^()]*broken-results\.mjs:\d+:\d+\)$/],
    ['--throw-build', /^hs: InvalidState: broken-results: build\(\) threw RangeError: build boom \(at [^()]*broken-results\.mjs:\d+:\d+\)$/],
    ['--throw-string', /^hs: InvalidState: broken-results: build\(\) threw a string$/],
  ])('a module whose function throws (%s) is one line with exit code 1 for plan and run, not a stack trace', async (flag, line) => {
    for (const command of ['plan', 'run']) {
      const { exitCode, err } = await hs([command, broken, '--', flag]);
      expect(exitCode).toBe(ExitCode.Failure);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(line);
    }
  });
});
