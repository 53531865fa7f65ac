import { Device, ErrorCode, HsError, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { Graph, type InputPort, type OutputPort } from '../src/index.js';
import { DEVICE_FRAMES_IN, ScriptedOperator, bindAll, compileOk, deviceFrames } from './support/operators.js';

function twoOperators(): { graph: Graph; out: OutputPort; inputs: InputPort[] } {
  const graph = new Graph('policies');
  let out!: OutputPort;
  const inputs: InputPort[] = [];
  graph.add(new ScriptedOperator('cam', (s) => (out = s.output('frames').producesTensor(deviceFrames(1000)))));
  for (const name of ['oldest', 'newest', 'reject', 'blocked']) {
    graph.add(new ScriptedOperator(name, (s) => inputs.push(s.input('frames', DEVICE_FRAMES_IN))));
  }
  return { graph, out, inputs };
}

describe('edge drop policies', () => {
  it('records each edge policy in the plan records, JSON and text', () => {
    const { graph, out, inputs } = twoOperators();
    graph.addFlow(out, inputs[0]!, { dropPolicy: 'dropOldest' });
    graph.addFlow(out, inputs[1]!, { dropPolicy: 'dropNewest', queueDepth: 3 });
    graph.addFlow(out, inputs[2]!, { dropPolicy: 'reject' });
    graph.addFlow(out, inputs[3]!);
    const plan = compileOk(graph, { deployment: bindAll(graph) });
    expect(plan.edges.map((e) => [e.id, e.dropPolicy])).toEqual([
      ['cam.frames->blocked.frames', 'block'],
      ['cam.frames->newest.frames', 'dropNewest'],
      ['cam.frames->oldest.frames', 'dropOldest'],
      ['cam.frames->reject.frames', 'reject'],
    ]);
    const json = plan.toJSON() as { edges: { id: string; dropPolicy: string }[] };
    expect(json.edges.find((e) => e.id === 'cam.frames->oldest.frames')?.dropPolicy).toBe('dropOldest');
    const text = plan.toText();
    expect(text).toMatch(/cam\.frames->newest\.frames: queueDepth 3 \(explicit\).*, dropNewest/);
    expect(text).toMatch(/cam\.frames->reject\.frames: .*, reject/);
    expect(text).not.toMatch(/cam\.frames->blocked\.frames: .*block/);
  });

  it('labels non-blocking drop policies on the DOT edges, and leaves block edges unlabelled', () => {
    const { graph, out, inputs } = twoOperators();
    graph.addFlow(out, inputs[0]!, { dropPolicy: 'dropOldest' });
    graph.addFlow(out, inputs[1]!, { dropPolicy: 'dropNewest' });
    graph.addFlow(out, inputs[2]!, { dropPolicy: 'reject' });
    graph.addFlow(out, inputs[3]!);
    const dot = compileOk(graph, { deployment: bindAll(graph) }).toDot();
    expect(dot).toMatch(/"cam" -> "oldest" \[label="[^"]*\\ndrop policy dropOldest"\]/);
    expect(dot).toMatch(/"cam" -> "reject" \[label="[^"]*\\ndrop policy reject"\]/);
    expect(dot).toMatch(/"cam" -> "blocked" \[label="[^"]*"\]/);
    expect(dot).not.toMatch(/"cam" -> "blocked" \[label="[^"]*drop policy/);
  });

  it('rejects an unknown drop policy while authoring, with InvalidArgument, and adds no flow', () => {
    const { graph, out, inputs } = twoOperators();
    const bad = { dropPolicy: 'dropAll' } as unknown as { dropPolicy: 'block' };
    let thrown: unknown;
    try {
      graph.addFlow(out, inputs[0]!, bad);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HsError);
    expect((thrown as HsError).code).toBe(ErrorCode.InvalidArgument);
    expect((thrown as HsError).message).toContain('dropAll');
    expect(graph.flows).toHaveLength(0);
  });
});

describe('host-wait edges', () => {
  it('marks the edge from a CUDA-active producer to a host-only consumer, in JSON and text', () => {
    const graph = new Graph('host-reader');
    let out!: OutputPort;
    let pinnedIn!: InputPort;
    let deviceIn!: InputPort;
    graph.add(
      new ScriptedOperator('producer', (s) => {
        out = s.output('frames').producesTensor({
          representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 },
          bounds: { maxByteSpan: 64 },
          storage: 'runtimePool',
        });
        s.requireCudaStream();
      }),
    );
    graph.add(new ScriptedOperator('reader', (s) => (pinnedIn = s.input('frames', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 }))));
    graph.add(
      new ScriptedOperator('kernel', (s) => {
        deviceIn = s.input('frames', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
        s.requireCudaStream();
      }),
    );
    graph.addFlow(out, pinnedIn);
    graph.addFlow(out, deviceIn);
    const bind = { producer: Device.cuda(0), kernel: Device.cuda(0) };
    const plan = compileOk(graph, { deployment: { bindOperatorDevice: bind } });
    expect(plan.operator('reader')?.stream).toBeNull();
    expect(plan.edge('producer.frames->reader.frames')?.hostWait).toBe(true);
    expect(plan.edge('producer.frames->kernel.frames')?.hostWait).toBe(false);
    const json = plan.toJSON() as { edges: { id: string; hostWait: boolean }[] };
    expect(json.edges.map((e) => [e.id, e.hostWait])).toEqual([
      ['producer.frames->kernel.frames', false],
      ['producer.frames->reader.frames', true],
    ]);
    expect(plan.toText()).toMatch(/producer\.frames->reader\.frames: .*, host wait before consumer/);
    expect(plan.toText()).not.toMatch(/producer\.frames->kernel\.frames: .*host wait/);
    expect(plan.toDot()).toMatch(/"producer" -> "reader" \[label="[^"]*\\nhost wait before consumer"\]/);
    expect(plan.toDot()).not.toMatch(/"producer" -> "kernel" \[label="[^"]*host wait/);
  });
});
