import type { DeploymentBinding, Graph } from '@hs/compiler';
import { requiresCudaDevice, type Device } from '@hs/streams';

/**
 * A deployment binding each named operator to its device, and each of its runtime-pool outputs that
 * declares a CUDA memory kind to the same device (such outputs take only their own binding: spec row 150).
 */
export function bindDevices(graph: Graph, bindOperatorDevice: Readonly<Record<string, Device>>): DeploymentBinding {
  const bindTensorOutputDevice: Record<string, Device> = {};
  for (const op of graph.operators) {
    const device = bindOperatorDevice[op.name];
    if (device === undefined) continue;
    for (const port of graph.specOf(op).outputs) {
      const kind = port.tensor?.representation.memoryKind ?? null;
      if (port.tensor?.storage === 'runtimePool' && kind !== null && requiresCudaDevice(kind)) bindTensorOutputDevice[port.key] = device;
    }
  }
  return { bindOperatorDevice, bindTensorOutputDevice };
}
