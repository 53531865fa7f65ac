import { Device, MemoryKind, requiresCudaDevice } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import type { PlanOptions } from './compile-options.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';
import type { ResolvedMemoryKind } from './resolve-memory-kinds.js';
import type { ResolvedTopics } from './resolve-topics.js';

/** Devices resolved for operators and tensor outputs. */
export interface Placement {
  /** True for operators with a CUDA-kind port requirement or declaration, or `requireCudaStream()`. */
  readonly cudaActive: ReadonlyMap<Operator, boolean>;
  /** The one device of each CUDA-active operator; `null` for host-only operators. */
  readonly operatorDevice: ReadonlyMap<Operator, Device | null>;
  /**
   * Device of each tensor output: the bound CUDA device for CUDA kinds, `cpu` for host kinds, `null`
   * for outputs that declared no tensor or have no binding.
   */
  readonly outputDevice: ReadonlyMap<OutputPort, Device | null>;
  /**
   * Device of each resolved topic endpoint, by topic: the CUDA device of a cudaDevice or pinnedHost
   * endpoint, `cpu` for a host endpoint, `null` when its binding is missing (reported).
   */
  readonly topicDevice: ReadonlyMap<string, Device | null>;
}

interface Obligation {
  readonly what: string;
  readonly device: Device;
}

/**
 * Resolves devices from explicit bindings only, never guessing device 0. A CUDA-kind runtime-pool output
 * must have its own `bindTensorOutputDevice` entry (`DEVICE_BINDING_REQUIRED` otherwise); a CUDA-kind
 * pass-through output takes its own entry, else its operator's `bindOperatorDevice` entry; an input fed by
 * a CUDA-kind output is obliged to that output's device. Every CUDA-active operator must resolve to
 * exactly one device (`DEVICE_CONFLICT`, `DEVICE_BINDING_REQUIRED`); bindings must name existing,
 * CUDA-kind targets and CUDA devices (`DEVICE_BINDING_UNKNOWN_TARGET`, `DEVICE_BINDING_INVALID`).
 * Spec: "Current limitations" (one device per operator, no cross-device copy).
 */
export function placeOperators(
  index: GraphIndex,
  options: PlanOptions,
  kinds: ReadonlyMap<OutputPort, ResolvedMemoryKind>,
  topics: ResolvedTopics,
  log: DiagnosticLog,
): Placement {
  const { bindOperatorDevice, bindTensorOutputDevice, bindTopicDevice } = options.deployment;
  const kindOf = (port: OutputPort): MemoryKind | null => kinds.get(port)?.memoryKind ?? null;
  checkBindingTargets(index, options, kindOf, log);
  checkTopicBindings(index, options, topics, log);
  const topicDevice = new Map<string, Device | null>();
  const endpointNeedsStream = (kind: MemoryKind): boolean => kind === MemoryKind.PinnedHost || requiresCudaDevice(kind);

  const cudaActive = new Map<Operator, boolean>();
  const outputDevice = new Map<OutputPort, Device | null>();
  const portBindingMissing = new Set<Operator>();
  // CUDA-kind outputs reported DEVICE_BINDING_REQUIRED: their consumers' missing device is that one cause.
  const unplacedOutputs = new Set<OutputPort>();
  for (const op of index.operators) {
    const spec = index.specs.get(op);
    if (spec === undefined) continue;
    // A pinnedHost or CUDA topic endpoint gives its operator a planned stream on the endpoint's device.
    cudaActive.set(
      op,
      spec.cudaStreamRequired ||
        spec.inputs.some((p) => p.requirements.memoryKind !== undefined && requiresCudaDevice(p.requirements.memoryKind)) ||
        spec.inputs.some((p) => {
          const sub = topics.subscriptions.get(p);
          return sub !== undefined && endpointNeedsStream(sub.memoryKind);
        }) ||
        spec.outputs.some((p) => {
          const kind = kindOf(p);
          return kind !== null && (requiresCudaDevice(kind) || (topics.publications.has(p) && endpointNeedsStream(kind)));
        }),
    );
    const opBinding = usableDevice(bindOperatorDevice[op.name]);
    for (const port of spec.outputs) {
      const kind = kindOf(port);
      const publication = topics.publications.get(port);
      const topicBinding = publication === undefined ? null : usableDevice(bindTopicDevice[publication.topic]);
      if (port.tensor === null || kind === null) {
        outputDevice.set(port, null);
        continue;
      }
      if (!requiresCudaDevice(kind)) {
        outputDevice.set(port, Device.cpu());
        if (publication !== undefined) {
          const endpoint = kind === MemoryKind.PinnedHost ? (topicBinding ?? opBinding) : Device.cpu();
          topicDevice.set(publication.topic, endpoint);
          if (endpoint === null) {
            portBindingMissing.add(op);
            log.error(
              DiagnosticCode.DeviceBindingRequired,
              { kind: 'topic', topic: publication.topic },
              `output ${port.key} publishes pinnedHost tensors to topic '${publication.topic}', so its producer needs a stream on the endpoint's device, ` +
                `and no binding names one; add deployment.bindTopicDevice['${publication.topic}'] = Device.cuda(n)`,
            );
          }
        }
        continue;
      }
      const ownBinding = usableDevice(bindTensorOutputDevice[port.key]);
      const device = ownBinding ?? opBinding ?? topicBinding;
      outputDevice.set(port, device);
      if (publication !== undefined) topicDevice.set(publication.topic, device);
      const connected = (index.fromOutput.get(port)?.length ?? 0) > 0 || publication !== undefined;
      if (port.tensor.storage === 'runtimePool' && ownBinding === null) {
        // Spec "Current limitations": a runtime pool in CUDA memory is placed only by its own output binding;
        // the operator's or topic's device is a fallback for pass-through outputs alone.
        portBindingMissing.add(op);
        unplacedOutputs.add(port);
        const inherited = device === null ? '' : ` (its operator or topic binding names ${device.toString()}, which places pass-through outputs only)`;
        log.error(
          DiagnosticCode.DeviceBindingRequired,
          { kind: 'port', operator: op.name, port: port.name },
          `output ${port.key} requests a runtime pool in ${kind} memory, and such a pool is placed only by its own binding${inherited}; ` +
            `add deployment.bindTensorOutputDevice['${port.key}'] = Device.cuda(${device === null ? 'n' : device.id})`,
        );
      } else if (device === null && connected) {
        portBindingMissing.add(op);
        unplacedOutputs.add(port);
        log.error(
          DiagnosticCode.DeviceBindingRequired,
          { kind: 'port', operator: op.name, port: port.name },
          `output ${port.key} produces ${kind} tensors but no device is bound and the compiler never guesses one; ` +
            `add deployment.bindTensorOutputDevice['${port.key}'] = Device.cuda(n) or deployment.bindOperatorDevice['${op.name}'] = Device.cuda(n)`,
        );
      }
    }
  }

  const operatorDevice = new Map<Operator, Device | null>();
  for (const op of index.operators) {
    const spec = index.specs.get(op);
    if (spec === undefined) continue;
    const obligations: Obligation[] = [];
    const opBinding = usableDevice(bindOperatorDevice[op.name]);
    if (opBinding !== null) obligations.push({ what: `deployment.bindOperatorDevice['${op.name}']`, device: opBinding });
    for (const port of spec.outputs) {
      const device = outputDevice.get(port);
      if (device?.isCuda === true) obligations.push({ what: `output ${port.key}`, device });
    }
    for (const edge of index.incoming.get(op) ?? []) {
      if (edge.flow.input.crossDevice) continue; // fed from any device on purpose (DeviceCopy)
      const device = outputDevice.get(edge.flow.output);
      if (device?.isCuda === true) obligations.push({ what: `input ${edge.flow.input.key} (fed by ${edge.flow.output.key})`, device });
    }
    for (const port of spec.outputs) {
      const publication = topics.publications.get(port);
      const device = publication === undefined ? undefined : topicDevice.get(publication.topic);
      if (device?.isCuda === true) obligations.push({ what: `topic '${publication?.topic ?? ''}' published by ${port.key}`, device });
    }
    for (const port of spec.inputs) {
      const sub = topics.subscriptions.get(port);
      if (sub === undefined) continue;
      if (!endpointNeedsStream(sub.memoryKind)) {
        topicDevice.set(sub.topic, Device.cpu());
        continue;
      }
      const device = usableDevice(bindTopicDevice[sub.topic]);
      topicDevice.set(sub.topic, device);
      if (device !== null) {
        obligations.push({ what: `deployment.bindTopicDevice['${sub.topic}'] (imported by ${port.key})`, device });
      } else {
        portBindingMissing.add(op);
        log.error(
          DiagnosticCode.DeviceBindingRequired,
          { kind: 'topic', topic: sub.topic },
          `input ${port.key} imports ${sub.memoryKind} tensors from topic '${sub.topic}' and an imported topic is placed by its endpoint name; ` +
            `add deployment.bindTopicDevice['${sub.topic}'] = Device.cuda(n)`,
        );
      }
    }

    if (cudaActive.get(op) !== true) {
      operatorDevice.set(op, null);
      reportHostOnly(index, op, opBinding, kindOf, log);
      continue;
    }
    const devices = [...new Set(obligations.map((o) => o.device))];
    if (devices.length === 1) {
      operatorDevice.set(op, devices[0] as Device);
      continue;
    }
    operatorDevice.set(op, null);
    if (devices.length > 1) {
      log.error(
        DiagnosticCode.DeviceConflict,
        { kind: 'operator', operator: op.name },
        `operator '${op.name}' has obligations on ${devices.length} devices (${obligations.map((o) => `${o.what} on ${o.device.toString()}`).join('; ')}); ` +
          'an operator runs on one device and the runtime inserts no cross-device copies, so bind them all to one device, split the operator, ' +
          'or place a DeviceCopy (@hs/runtime) between the devices',
      );
    } else if (!portBindingMissing.has(op) && !fedByUnplaced(index, op, unplacedOutputs)) {
      log.error(
        DiagnosticCode.DeviceBindingRequired,
        { kind: 'operator', operator: op.name },
        `operator '${op.name}' is CUDA-active but no binding gives it a device and the compiler never guesses one; ` +
          `add deployment.bindOperatorDevice['${op.name}'] = Device.cuda(n)`,
      );
    }
  }
  reportCrossDeviceEdges(index, cudaActive, operatorDevice, log);
  return { cudaActive, operatorDevice, outputDevice, topicDevice };
}

/** True when an input of `op` (other than a crossDevice one) is fed by an output already reported unplaced. */
function fedByUnplaced(index: GraphIndex, op: Operator, unplaced: ReadonlySet<OutputPort>): boolean {
  for (const edge of index.incoming.get(op) ?? []) {
    if (!edge.flow.input.crossDevice && unplaced.has(edge.flow.output)) return true;
  }
  return false;
}

/**
 * A tensor edge whose producer and consumer both run on streams, on two devices, fails closed even when its
 * tensors are host-accessible (host or pinnedHost): the consumer's stream would wait on readiness events
 * of the producer's device and register itself for release with a pool whose events live there
 * (`DEVICE_CONFLICT` on the edge). CUDA-kind outputs are already reported as the consumer's conflict.
 */
function reportCrossDeviceEdges(index: GraphIndex, cudaActive: ReadonlyMap<Operator, boolean>, operatorDevice: ReadonlyMap<Operator, Device | null>, log: DiagnosticLog): void {
  for (const edge of index.edges) {
    if (edge.flow.input.crossDevice || cudaActive.get(edge.producer) !== true || cudaActive.get(edge.consumer) !== true) continue;
    const producer = operatorDevice.get(edge.producer) ?? null;
    const consumer = operatorDevice.get(edge.consumer) ?? null;
    if (producer === null || consumer === null || producer === consumer) continue;
    const tensor = edge.flow.output.tensor;
    if (tensor === null) continue; // messages carry no events
    const kind = tensor.representation.memoryKind;
    if (kind !== null && requiresCudaDevice(kind)) continue;
    log.error(
      DiagnosticCode.DeviceConflict,
      { kind: 'edge', edge: edge.id },
      `edge ${edge.id}: producer '${edge.producer.name}' orders its tensors with events on ${producer.toString()}, and consumer '${edge.consumer.name}' runs on a stream on ${consumer.toString()}, ` +
        'which can neither wait on nor release them; the runtime inserts no cross-device copies, so bind both operators to one device ' +
          'or feed an input declared { crossDevice: true } (a DeviceCopy of @hs/runtime)',
    );
  }
}

function usableDevice(device: Device | undefined): Device | null {
  return device?.isCuda === true ? device : null;
}

function checkBindingTargets(index: GraphIndex, options: PlanOptions, kindOf: (port: OutputPort) => MemoryKind | null, log: DiagnosticLog): void {
  const operators = new Set(index.operators.map((op) => op.name));
  const outputs = new Map<string, OutputPort>();
  for (const op of index.operators) for (const port of index.specs.get(op)?.outputs ?? []) outputs.set(port.key, port);

  for (const [name, device] of Object.entries(options.deployment.bindOperatorDevice)) {
    const option = `deployment.bindOperatorDevice['${name}']`;
    if (!operators.has(name)) {
      log.error(DiagnosticCode.DeviceBindingUnknownTarget, { kind: 'option', option }, `${option}: graph '${index.name}' has no operator '${name}'; check the name`);
    } else if (!device.isCuda) {
      log.error(DiagnosticCode.DeviceBindingInvalid, { kind: 'option', option }, `${option} is ${device.toString()}; bind operators to a CUDA device, Device.cuda(n)`);
    }
  }
  for (const [key, device] of Object.entries(options.deployment.bindTensorOutputDevice)) {
    const option = `deployment.bindTensorOutputDevice['${key}']`;
    const port = outputs.get(key);
    if (port === undefined) {
      log.error(
        DiagnosticCode.DeviceBindingUnknownTarget,
        { kind: 'option', option },
        `${option}: graph '${index.name}' has no output '${key}'; keys are 'operator.port' of an output`,
      );
    } else if (port.tensor === null || kindOf(port) === null || !requiresCudaDevice(kindOf(port) as MemoryKind)) {
      if (port.tensor !== null && kindOf(port) === null) continue;
      log.error(
        DiagnosticCode.DeviceBindingInvalid,
        { kind: 'option', option },
        `${option}: output ${key} ${port.tensor === null ? 'declares no tensor' : `produces ${kindOf(port) ?? '?'} tensors`}; ` +
          'only cudaDevice or cudaManaged outputs take a device binding, so remove it',
      );
    } else if (!device.isCuda) {
      log.error(DiagnosticCode.DeviceBindingInvalid, { kind: 'option', option }, `${option} is ${device.toString()}; bind CUDA outputs to Device.cuda(n)`);
    }
  }
}

/**
 * Checks `deployment.bindTopicDevice`: every key names a topic endpoint of this graph
 * (`DEVICE_BINDING_UNKNOWN_TARGET`), every value is a CUDA device, and the endpoint is pinnedHost or
 * CUDA memory (`DEVICE_BINDING_INVALID`: a host endpoint has no device).
 */
function checkTopicBindings(index: GraphIndex, options: PlanOptions, topics: ResolvedTopics, log: DiagnosticLog): void {
  const declared = new Set([...index.publications.map((p) => p.topic), ...index.subscriptions.map((s) => s.topic)]);
  const kindOfTopic = new Map<string, MemoryKind>();
  for (const p of topics.publications.values()) kindOfTopic.set(p.topic, p.memoryKind);
  for (const s of topics.subscriptions.values()) kindOfTopic.set(s.topic, s.memoryKind);
  for (const [topic, device] of Object.entries(options.deployment.bindTopicDevice)) {
    const option = `deployment.bindTopicDevice['${topic}']`;
    const kind = kindOfTopic.get(topic);
    if (!declared.has(topic)) {
      log.error(DiagnosticCode.DeviceBindingUnknownTarget, { kind: 'option', option }, `${option}: graph '${index.name}' neither publishes nor subscribes topic '${topic}'; check the name`);
    } else if (!device.isCuda) {
      log.error(DiagnosticCode.DeviceBindingInvalid, { kind: 'option', option }, `${option} is ${device.toString()}; bind topic endpoints to a CUDA device, Device.cuda(n)`);
    } else if (kind === MemoryKind.Host) {
      log.error(
        DiagnosticCode.DeviceBindingInvalid,
        { kind: 'option', option },
        `${option}: topic '${topic}' carries host memory, which no device orders; remove the binding or use pinnedHost or cudaDevice memory`,
      );
    }
  }
}

function reportHostOnly(index: GraphIndex, op: Operator, opBinding: Device | null, kindOf: (port: OutputPort) => MemoryKind | null, log: DiagnosticLog): void {
  if (opBinding !== null) {
    log.warning(
      DiagnosticCode.DeviceBindingUnused,
      { kind: 'operator', operator: op.name },
      `deployment.bindOperatorDevice['${op.name}'] has no effect: the operator is host-only (no CUDA-kind port and no requireCudaStream()); remove the binding or call spec.requireCudaStream()`,
    );
  }
  for (const edge of index.incoming.get(op) ?? []) {
    if (kindOf(edge.flow.output) === MemoryKind.CudaDevice) {
      log.warning(
        DiagnosticCode.DeviceTensorToHostOnlyOperator,
        { kind: 'edge', edge: edge.id },
        `edge ${edge.id}: host-only operator '${op.name}' receives cudaDevice tensors but has no stream to copy them; ` +
          `declare the input with { memoryKind: MemoryKind.CudaDevice } or call spec.requireCudaStream() in its setup()`,
      );
    }
  }
}
