import { type PipelineModule, createOutputDirectory } from '@hs/runtime';
import { ok } from '@hs/streams';
import { loadBundledPhoto } from './bundled-photo.js';
import { type CliOptions, parseCliArguments } from './cli-options.js';
import { buildSensorFusionGraph } from './pipeline.js';
import { runSummaryLines } from './run-summary.js';

/**
 * The sensor-fusion pipeline as a `PipelineModule`, for `hs run sensor-fusion -- [options]` and
 * `hs plan sensor-fusion --svg`: the same options as `pnpm start` (`--seconds`, `--out`, `--backend`), the
 * same graph, and the same summary lines. `--out` is created only when a run is prepared (`prepareRun`).
 */
const sensorFusionModule: PipelineModule<CliOptions> = {
  name: 'sensor-fusion',
  description: 'A 60 Hz camera fused with a 1 kHz IMU through a window of every queued sample; a 10 Hz recorder drops the oldest results.',
  parseArguments(args, output) {
    const request = parseCliArguments(args, output);
    if (!request.ok) return request;
    return ok(request.value.kind === 'exit' ? request.value : { kind: 'build', options: request.value.options });
  },
  async build(options) {
    const built = buildSensorFusionGraph({ photo: loadBundledPhoto(), seconds: options.seconds, outDir: options.outDir });
    return {
      graph: built.graph,
      sessionOptions: options.backend === undefined ? {} : { backend: options.backend },
      expectedFrames: (60 + 1000) * options.seconds,
      prepareRun: () => createOutputDirectory(options.outDir, '--out'),
      summary: (metrics) => runSummaryLines(built, metrics),
    };
  },
};

export default sensorFusionModule;
