import { DType } from '@hs/tensor';
import { MemoryKind } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { DiagnosticCode, Graph, Rate, RateRatio, paramSchema, rateParam, type InputPort, type OutputPort } from '../src/index.js';
import { lifecycleGraph } from './support/lifecycle.js';
import { ScriptedOperator, compileFailure, compileOk } from './support/operators.js';

const MIB = 1 << 20;
const HOST_FRAMES = { representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, bounds: { maxByteSpan: 1024 }, storage: 'runtimePool' } as const;

/** A source at `hz` feeding a consumer triggered by a clock at `clockHz`. */
function clockedPair(hz: number, clockHz: number, depth?: number, extra?: (consumerIn: InputPort) => object): Graph {
  const graph = new Graph('pair');
  let out: OutputPort | null = null;
  let input: InputPort | null = null;
  graph.add(new ScriptedOperator('src', (spec) => (out = spec.output('out').producesTensor(HOST_FRAMES).nominalRate(Rate.hz(hz)))));
  graph.add(
    new ScriptedOperator('dst', (spec) => {
      input = spec.input('in');
      spec.temporalContract({ trigger: { clock: Rate.hz(clockHz) }, ...(extra?.(input) ?? {}) });
    }),
  );
  graph.addFlow(out as unknown as OutputPort, input as unknown as InputPort, depth === undefined ? undefined : { queueDepth: depth });
  return graph;
}

describe('rate-aware queue sizing', () => {
  it('sizes the lifecycle edge 8 at 60 Hz and admits 16 over the 120 Hz domain', () => {
    const plan = compileOk(lifecycleGraph().graph);
    const edge = plan.edge('source.frames->recorder.frames');
    expect(edge).toMatchObject({ queueDepth: 8, admittedQueueDepth: 16, queueDepthSource: 'automatic' });
    expect(plan.queueSizingRecipe('source.frames->recorder.frames')).toMatchObject({
      nominalArrivals: 4,
      recommendation: 8,
      hardFloor: 1,
      automaticDepth: 8,
      admittedCeiling: 16,
      explicitDepth: null,
    });
    expect(plan.accumulationHorizons).toEqual([{ edge: 'source.frames->recorder.frames', trigger: 'clock 15 Hz', seconds: '1/15', admittedSeconds: '1/15' }]);
  });

  it('gives 16 active entries when the source runs at 120 Hz', () => {
    expect(compileOk(lifecycleGraph({ rateHz: 120 }).graph).edge('source.frames->recorder.frames')?.queueDepth).toBe(16);
  });

  it('joins 6 MiB derived slots with 14 active and 22 admitted entries: 84 MiB and 132 MiB', () => {
    const plan = compileOk(lifecycleGraph().graph);
    const pool = plan.pool('pool:source.frames');
    expect(pool).toMatchObject({ maxByteSpan: 6 * MIB, byteSpanSource: 'derived', memoryKind: MemoryKind.Host, memoryKindSource: 'source.params.storage' });
    expect(pool?.derivation.terms.map((t) => [t.term, t.value, t.admittedValue])).toEqual([
      ['maxConsumerQueueDepth', 8, 16],
      ['retainedHistory', 4, 4],
      ['retirement', 1, 1],
      ['producerLoan', 1, 1],
    ]);
    expect(pool?.activeSlotCount).toBe(14);
    expect(pool?.slotCount).toBe(22);
    expect(pool?.activeLogicalBytes).toBe(84 * MIB);
    expect(pool?.admittedLogicalBytes).toBe(132 * MIB);
    expect(plan.poolCapacityDependencies[0]).toMatchObject({ activeEntries: 14, admittedEntries: 22, perSlotBytes: 6 * MIB });
    expect(plan.providerAllocationPlans[0]).toMatchObject({ slots: 22, slotBytes: 6 * MIB, reservedBytes: 132 * MIB });
  });

  it('gives 34 entries to a 1 kHz IMU input of a 60 Hz camera-triggered operator', () => {
    const graph = new Graph('imu');
    let imu: OutputPort | null = null;
    let camera: OutputPort | null = null;
    let imuIn: InputPort | null = null;
    let cameraIn: InputPort | null = null;
    graph.add(new ScriptedOperator('imu', (spec) => (imu = spec.output('samples').producesTensor(HOST_FRAMES).nominalRate(Rate.hz(1000)))));
    graph.add(new ScriptedOperator('camera', (spec) => (camera = spec.output('frames').producesTensor(HOST_FRAMES).nominalRate(Rate.hz(60)))));
    graph.add(
      new ScriptedOperator('fusion', (spec) => {
        cameraIn = spec.input('frames');
        imuIn = spec.input('samples');
        spec.temporalContract({ trigger: { input: cameraIn } });
      }),
    );
    graph.addFlow(imu as unknown as OutputPort, imuIn as unknown as InputPort);
    graph.addFlow(camera as unknown as OutputPort, cameraIn as unknown as InputPort);
    const plan = compileOk(graph);
    expect(plan.edge('imu.samples->fusion.samples')).toMatchObject({ queueDepth: 34, queueDepthSource: 'automatic' });
    expect(plan.queueSizingRecipe('imu.samples->fusion.samples')).toMatchObject({ nominalArrivals: 17, recommendation: 34 });
    expect(plan.edge('camera.frames->fusion.frames')).toMatchObject({ queueDepth: 2, queueDepthSource: 'automatic' });
  });

  it('derives rates through follows(input, ratio) and falls back to expectedRate only when the producer declares none', () => {
    const graph = new Graph('chain');
    let out: OutputPort | null = null;
    let midIn: InputPort | null = null;
    let thumbs: OutputPort | null = null;
    let sinkIn: InputPort | null = null;
    let bare: OutputPort | null = null;
    let expectIn: InputPort | null = null;
    graph.add(new ScriptedOperator('cam', (spec) => (out = spec.output('frames').producesTensor(HOST_FRAMES).nominalRate(Rate.hz(60)))));
    graph.add(
      new ScriptedOperator('thumbnailer', (spec) => {
        midIn = spec.input('frames').expectedRate(Rate.hz(60));
        thumbs = spec.output('thumbs').producesTensor(HOST_FRAMES).follows(midIn, new RateRatio(1, 4));
        spec.temporalContract({ trigger: { input: midIn } });
      }),
    );
    graph.add(new ScriptedOperator('sink', (spec) => (sinkIn = spec.input('thumbs'))));
    graph.add(new ScriptedOperator('legacy', (spec) => (bare = spec.output('out').producesTensor(HOST_FRAMES))));
    graph.add(
      new ScriptedOperator('viewer', (spec) => {
        expectIn = spec.input('in').expectedRate(Rate.hz(30));
        spec.temporalContract({ trigger: { clock: Rate.hz(10) } });
      }),
    );
    graph.addFlow(out as unknown as OutputPort, midIn as unknown as InputPort);
    graph.addFlow(thumbs as unknown as OutputPort, sinkIn as unknown as InputPort);
    graph.addFlow(bare as unknown as OutputPort, expectIn as unknown as InputPort);
    const plan = compileOk(graph);
    const rate = (op: string, port: string, direction: string) => plan.portRates.find((r) => r.port.operator === op && r.port.port === port && r.direction === direction);
    expect(rate('thumbnailer', 'thumbs', 'output')).toMatchObject({ source: 'follows', active: Rate.hz(15) });
    expect(rate('sink', 'thumbs', 'input')).toMatchObject({ source: 'upstream' });
    expect(rate('viewer', 'in', 'input')).toMatchObject({ source: 'expected', active: Rate.hz(30) });
    // The sink has no temporal contract: no horizon, so the default depth applies.
    expect(plan.edge('thumbnailer.thumbs->sink.thumbs')).toMatchObject({ queueDepth: 2, queueDepthSource: 'default' });
    expect(plan.edge('legacy.out->viewer.in')).toMatchObject({ queueDepth: 6, queueDepthSource: 'automatic' });
    expect(plan.diagnostics).toEqual([]);
  });

  it('applies a compile-wide headroom ratio to the recommendation only', () => {
    const plan = compileOk(clockedPair(60, 15), { automaticQueueSizing: { headroomRatio: new RateRatio(3, 2) } });
    expect(plan.edge('src.out->dst.in')?.queueDepth).toBe(6);
    expect(plan.options.headroomRatio.toString()).toBe('3/2');
  });

  it('keeps an explicit depth exactly, warning below the recommendation', () => {
    const plan = compileOk(clockedPair(60, 15, 4));
    expect(plan.edge('src.out->dst.in')).toMatchObject({ queueDepth: 4, admittedQueueDepth: 4, queueDepthSource: 'explicit' });
    expect(plan.diagnostics.map((d) => [d.code, d.severity])).toEqual([[DiagnosticCode.QueueDepthBelowRecommendation, 'warning']]);
  });

  it('rejects an explicit depth below the hard floor', () => {
    const error = compileFailure(clockedPair(60, 15, 2, (input) => ({ windows: [{ input, entries: 3 }] })));
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.QueueDepthBelowHardFloor]);
    expect(error.errors[0]?.message).toContain('hard floor 3');
  });

  it('composes the hard floor: max within a group, sum of groups, max across scenarios', () => {
    const graph = new Graph('floor');
    let out: OutputPort | null = null;
    let input: InputPort | null = null;
    graph.add(new ScriptedOperator('src', (spec) => (out = spec.output('out').producesTensor(HOST_FRAMES).producerBurst(2))));
    graph.add(
      new ScriptedOperator('dst', (spec) => {
        input = spec.input('in');
        spec.temporalContract({
          trigger: { input },
          windows: [{ input, entries: 3, scenario: 'steady' }],
          selectors: [
            { input, entries: 6, scenario: 'replay' },
            { input, entries: 2, scenario: 'steady' },
          ],
        });
      }),
    );
    graph.addFlow(out as unknown as OutputPort, input as unknown as InputPort);
    const plan = compileOk(graph);
    // steady: max(1, 3, 2) + 2 = 5; replay: max(1, 6) + 2 = 8 -> 8; no rate evidence: max(8, default 2).
    expect(plan.queueSizingRecipe('src.out->dst.in')?.hardFloor).toBe(8);
    expect(plan.edge('src.out->dst.in')?.queueDepth).toBe(8);
    expect(plan.hardFloorContributors.map((c) => c.kind)).toEqual(['minimumQueue', 'windowRetention', 'selectorRetention', 'selectorRetention', 'producerBurst']);
  });

  it('warns when an expected rate contradicts the producer', () => {
    const graph = new Graph('mismatch');
    let out: OutputPort | null = null;
    let input: InputPort | null = null;
    graph.add(new ScriptedOperator('src', (spec) => (out = spec.output('out').producesTensor(HOST_FRAMES).nominalRate(Rate.hz(60)))));
    graph.add(new ScriptedOperator('dst', (spec) => (input = spec.input('in').expectedRate(Rate.hz(30)))));
    graph.addFlow(out as unknown as OutputPort, input as unknown as InputPort);
    expect(compileOk(graph).diagnostics.map((d) => d.code)).toEqual([DiagnosticCode.RateExpectationMismatch]);
  });

  it('rejects rate declarations it cannot resolve', () => {
    const graph = new Graph('bad-rates');
    let foreign: InputPort | null = null;
    graph.add(new ScriptedOperator('a', (spec) => (foreign = spec.input('in', undefined, { optional: true }))));
    graph.add(new ScriptedOperator('b', (spec) => spec.output('out').producesTensor(HOST_FRAMES).follows(foreign as unknown as InputPort)));
    graph.add(new ScriptedOperator('c', (spec) => spec.temporalContract({ trigger: { input: foreign as unknown as InputPort } })));
    const error = compileFailure(graph);
    expect(error.errors.map((d) => [d.code, d.subject])).toEqual([
      [DiagnosticCode.RateDeclarationInvalid, { kind: 'port', operator: 'b', port: 'out' }],
      [DiagnosticCode.RateDeclarationInvalid, { kind: 'operator', operator: 'c' }],
    ]);
  });

  it('rejects a headroom that is not a RateRatio', () => {
    const error = compileFailure(clockedPair(60, 15), { automaticQueueSizing: { headroomRatio: 2 as unknown as RateRatio } });
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.CompileOptionInvalid]);
  });
});

describe('admitted ceilings of parameter-driven triggers', () => {
  it('keeps a self-triggered input at its constant ratio over the whole rate domain', () => {
    const Params = paramSchema('com.hs.test.Self', 1, { rate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime() });
    const graph = new Graph('self');
    let out: OutputPort | null = null;
    let input: InputPort | null = null;
    graph.add(new ScriptedOperator('src', (spec) => (out = spec.output('out').producesTensor(HOST_FRAMES).nominalRate(spec.params(Params, { rate: Rate.hz(60) }).ref('rate')))));
    graph.add(
      new ScriptedOperator('dst', (spec) => {
        input = spec.input('in');
        spec.temporalContract({ trigger: { input } });
      }),
    );
    graph.addFlow(out as unknown as OutputPort, input as unknown as InputPort);
    expect(compileOk(graph).edge('src.out->dst.in')).toMatchObject({ queueDepth: 2, admittedQueueDepth: 2 });
  });
});
