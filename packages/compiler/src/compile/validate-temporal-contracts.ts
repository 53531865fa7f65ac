import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';
import type { ResolvedTopics } from './resolve-topics.js';

/**
 * Reports a temporal contract whose trigger input or `required` input is an unconnected optional input
 * (no flow, no topic): the operator could never run (`CONTRACT_INPUT_UNCONNECTED`, naming operator and
 * port). Inputs of another operator are reported by rate resolution. Spec: "Size queue entries from
 * nominal rates" (the temporal contract is the only scheduling authority).
 */
export function validateTemporalContracts(index: GraphIndex, topics: ResolvedTopics, log: DiagnosticLog): void {
  for (const op of index.operators) {
    const contract = index.specs.get(op)?.contract ?? null;
    if (contract === null) continue;
    const named = [...('input' in contract.trigger ? [{ what: 'trigger', port: contract.trigger.input }] : []), ...(contract.required ?? []).map((port) => ({ what: 'required', port }))];
    for (const { what, port } of named) {
      if (port.operator !== op) continue;
      const connected = (index.intoInput.get(port)?.length ?? 0) > 0 || topics.subscriptions.has(port);
      if (connected) continue;
      log.error(
        DiagnosticCode.ContractInputUnconnected,
        { kind: 'port', operator: op.name, port: port.name },
        `operator '${op.name}': its temporal contract's ${what} input ${port.key} is unconnected, so it could never run; ` +
          `connect it with graph.addFlow(producer.output, ${port.key}) or graph.subscribe(topic, ${port.key}), or trigger on a clock`,
      );
    }
  }
}
