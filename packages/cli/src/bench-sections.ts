import { ErrorCode, err, ok, type Result } from '@hs/streams';

/**
 * The sections of the hs benchmarks (`tooling/benchmarks`), in the order they run: `compile` (compile()
 * of a large graph), `chain` (the two-operator series of the `hs-bench-report/1` report), `heap` (JS heap
 * growth over many frames), `p2g` (host PointsToGrid), `ipc` (tensors across two processes). The one list
 * both `hs bench --sections` and the benchmarks' `HS_BENCH_SECTIONS` are checked against.
 * @example
 * ```ts
 * import { BENCH_SECTIONS } from '@hs/cli';
 *
 * console.log(`hs bench --sections takes: ${BENCH_SECTIONS.join(', ')}`);
 * ```
 */
export const BENCH_SECTIONS = Object.freeze(['compile', 'chain', 'heap', 'p2g', 'ipc'] as const);

/** One of `BENCH_SECTIONS`. */
export type BenchSection = (typeof BENCH_SECTIONS)[number];

/**
 * Parses a comma-separated list of benchmark sections (`chain,heap`); repeated names count once.
 *
 * @param list - the text given, e.g. the value of `--sections` or `HS_BENCH_SECTIONS`.
 * @param source - what the list came from, named in the error (`--sections`, `HS_BENCH_SECTIONS`).
 * @returns the sections in the order given; `ErrorCode.InvalidArgument` for an empty name or a name not
 *   in `BENCH_SECTIONS` (`<source>: unknown section 'foo'; known: compile, chain, heap, p2g, ipc`).
 * @example
 * ```ts
 * import { parseBenchSections } from '@hs/cli';
 *
 * const sections = parseBenchSections('chain,heap,chain', '--sections');
 * if (sections.ok) console.log(`runs ${sections.value.join(' then ')}`); // repeated names count once
 * const bad = parseBenchSections('chain,fast', 'HS_BENCH_SECTIONS');
 * if (!bad.ok) console.log(bad.error.message); // names the source and the known sections
 * ```
 */
export function parseBenchSections(list: string, source: string): Result<readonly BenchSection[]> {
  const sections: BenchSection[] = [];
  for (const name of list.split(',')) {
    if (!isBenchSection(name)) {
      const what = name === '' ? `empty section name in '${list}'` : `unknown section '${name}'`;
      return err(ErrorCode.InvalidArgument, `${source}: ${what}; known: ${BENCH_SECTIONS.join(', ')}`);
    }
    if (!sections.includes(name)) sections.push(name);
  }
  return ok(sections);
}

function isBenchSection(name: string): name is BenchSection {
  return (BENCH_SECTIONS as readonly string[]).includes(name);
}
