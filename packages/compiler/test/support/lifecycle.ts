import { MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import {
  Graph,
  Rate,
  enumParam,
  memoryKindCase,
  parameterContiguousByteSpan,
  parameterMemoryKind,
  paramSchema,
  rateParam,
  shapeParam,
  type InputPort,
  type OperatorSpec,
  type OutputPort,
} from '../../src/index.js';
import { ScriptedOperator } from './operators.js';

/** The lifecycle source's parameters: a 3-D frame shape, the storage kind, and a runtime frame rate (1..120 Hz). */
export const LifecycleSourceParams = paramSchema('com.hs.test.LifecycleSource', 1, {
  frameShape: shapeParam({ rank: 3, maxExtent: 8192 }).recompileRequired(),
  storage: enumParam(['host', 'pinned']).recompileRequired(),
  frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime(),
});

/** 1024 x 1536 x 4 bytes = 6 MiB. */
export const SIX_MIB_SHAPE = [1024, 1536, 4] as const;

/**
 * The spec's lifecycle graph: a 60 Hz source (admitted up to 120 Hz) with 6 MiB parameter-derived
 * slots in parameter-selected host memory, and a 15 Hz clock-triggered recorder keeping four
 * retained-history entries. Operators are added in `order` to show order independence.
 */
export function lifecycleGraph(options: { rateHz?: number; storage?: 'host' | 'pinned'; reverse?: boolean; recorderDepth?: number } = {}): {
  graph: Graph;
  frames: () => OutputPort;
  recorderIn: () => InputPort;
} {
  const graph = new Graph('lifecycle');
  let frames: OutputPort | null = null;
  let recorderIn: InputPort | null = null;
  const source = new ScriptedOperator('source', (spec: OperatorSpec) => {
    const params = spec.params(LifecycleSourceParams, {
      frameShape: [...SIX_MIB_SHAPE],
      storage: options.storage ?? 'host',
      frameRate: Rate.hz(options.rateHz ?? 60),
    });
    frames = spec
      .output('frames')
      .producesTensor(
        { representation: { dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' },
        {
          byteSpan: parameterContiguousByteSpan(params.ref('frameShape')),
          memoryKind: parameterMemoryKind(params.ref('storage'), [
            memoryKindCase('host', MemoryKind.Host),
            memoryKindCase('pinned', MemoryKind.PinnedHost),
          ]),
        },
      )
      .nominalRate(params.ref('frameRate'));
  });
  const recorder = new ScriptedOperator('recorder', (spec: OperatorSpec) => {
    recorderIn = spec.input('frames', { dtype: DType.uint8, rank: 3 }).retainHistory(4);
    spec.temporalContract({ trigger: { clock: Rate.hz(15) } });
  });
  for (const op of options.reverse === true ? [recorder, source] : [source, recorder]) graph.add(op);
  graph.addFlow(frames as unknown as OutputPort, recorderIn as unknown as InputPort, options.recorderDepth === undefined ? undefined : { queueDepth: options.recorderDepth });
  return { graph, frames: () => frames as unknown as OutputPort, recorderIn: () => recorderIn as unknown as InputPort };
}
