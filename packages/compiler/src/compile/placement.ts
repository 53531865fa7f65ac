import { Device, MemoryKind, requiresCudaDevice } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import type { PlanOptions } from './compile-options.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';
import type { ResolvedMemoryKind } from './resolve-memory-kinds.js';

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
}

interface Obligation {
  readonly what: string;
  readonly device: Device;
}

/**
 * Resolves devices from explicit bindings only, never guessing device 0. A CUDA-kind output takes its
 * own `bindTensorOutputDevice` entry, else its operator's `bindOperatorDevice` entry; an input fed by
 * a CUDA-kind output is obliged to that output's device. Every CUDA-active operator must resolve to
 * exactly one device (`DEVICE_CONFLICT`, `DEVICE_BINDING_REQUIRED`); bindings must name existing,
 * CUDA-kind targets and CUDA devices (`DEVICE_BINDING_UNKNOWN_TARGET`, `DEVICE_BINDING_INVALID`).
 * Spec: "Current limitations" (one device per operator, no cross-device copy).
 */
export function placeOperators(index: GraphIndex, options: PlanOptions, kinds: ReadonlyMap<OutputPort, ResolvedMemoryKind>, log: DiagnosticLog): Placement {
  const { bindOperatorDevice, bindTensorOutputDevice } = options.deployment;
  const kindOf = (port: OutputPort): MemoryKind | null => kinds.get(port)?.memoryKind ?? null;
  checkBindingTargets(index, options, kindOf, log);

  const cudaActive = new Map<Operator, boolean>();
  const outputDevice = new Map<OutputPort, Device | null>();
  const portBindingMissing = new Set<Operator>();
  for (const op of index.operators) {
    const spec = index.specs.get(op);
    if (spec === undefined) continue;
    cudaActive.set(
      op,
      spec.cudaStreamRequired ||
        spec.inputs.some((p) => p.requirements.memoryKind !== undefined && requiresCudaDevice(p.requirements.memoryKind)) ||
        spec.outputs.some((p) => {
          const kind = kindOf(p);
          return kind !== null && requiresCudaDevice(kind);
        }),
    );
    const opBinding = usableDevice(bindOperatorDevice[op.name]);
    for (const port of spec.outputs) {
      const kind = kindOf(port);
      if (port.tensor === null || kind === null) {
        outputDevice.set(port, null);
        continue;
      }
      if (!requiresCudaDevice(kind)) {
        outputDevice.set(port, Device.cpu());
        continue;
      }
      const device = usableDevice(bindTensorOutputDevice[port.key]) ?? opBinding;
      outputDevice.set(port, device);
      const connected = (index.fromOutput.get(port)?.length ?? 0) > 0;
      if (device === null && (connected || port.tensor.storage === 'runtimePool')) {
        portBindingMissing.add(op);
        log.error(
          DiagnosticCode.DeviceBindingRequired,
          { kind: 'port', operator: op.name, port: port.name },
          `output ${port.key} produces ${kind} tensors but no device is bound and the compiler never guesses one; ` +
            `add deployment.bindTensorOutputDevice['${port.key}'] = Device.cuda(n) or deployment.bindOperatorDevice['${op.name}']`,
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
      const device = outputDevice.get(edge.flow.output);
      if (device?.isCuda === true) obligations.push({ what: `input ${edge.flow.input.key} (fed by ${edge.flow.output.key})`, device });
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
          'an operator runs on one device and the runtime inserts no cross-device copies, so bind them all to one device or split the operator',
      );
    } else if (!portBindingMissing.has(op)) {
      log.error(
        DiagnosticCode.DeviceBindingRequired,
        { kind: 'operator', operator: op.name },
        `operator '${op.name}' is CUDA-active but no binding gives it a device and the compiler never guesses one; ` +
          `add deployment.bindOperatorDevice['${op.name}'] = Device.cuda(n)`,
      );
    }
  }
  return { cudaActive, operatorDevice, outputDevice };
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
