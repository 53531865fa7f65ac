import { bunnyPoints, loadPoints } from '@hs/example-point-cloud-input';
import { type PipelineModule, createOutputDirectory } from '@hs/runtime';
import { Device, removeStaleStaging, unwrap } from '@hs/streams';
import { parseScanToVolumeArguments, type ScanToVolumeCliOptions } from './cli-options.js';
import { buildScanToVolumeGraph } from './pipeline.js';
import { runSummaryLines } from './run-summary.js';

/**
 * The flagship as a `PipelineModule`, for `hs run scan-to-volume -- [options]`, `hs plan scan-to-volume`
 * and `pnpm run main`: loads the cloud (the bundled bunny or `--input`), builds the graph
 * (`buildScanToVolumeGraph`; its pools allocate through `poolResources`; `--devices` splits the build by space,
 * and a host backend then emulates as many devices as the highest ordinal needs), creates the output folder when a run is prepared (a symlinked `--out` refused) and removes the staging
 * files runs killed mid-write left there (`removeStaleStaging`: those of dead pids), and after the run prints
 * `runSummaryLines` (the `.nvdb` file re-read and validated, the preview, the builder's report, the resource
 * statistics); a written file that does not read back is the summary's error, so the run exits non-zero.
 */
const scanToVolumeModule: PipelineModule<ScanToVolumeCliOptions> = {
  name: 'scan-to-volume',
  description: 'A point cloud streamed as scans into a growing NanoVDB volume through an injected resource, written as .nvdb with a quarter-rate PNG preview.',
  parseArguments: parseScanToVolumeArguments,
  async build(options) {
    const cloud = options.input === undefined ? bunnyPoints() : unwrap(loadPoints(options.input));
    const { devices, ...rest } = options;
    const graph = unwrap(buildScanToVolumeGraph({ ...rest, cloud, ...(devices === undefined ? {} : { devices: devices.map((d) => Device.cuda(d)) }) }));
    // a host backend emulates the devices --devices names; a CUDA backend without one refuses at session start
    const deviceCount = devices === undefined ? 0 : Math.max(...devices) + 1;
    return {
      graph: graph.graph,
      compileOptions: graph.compileOptions,
      sessionOptions: {
        ...(options.backend === undefined ? {} : { backend: options.backend }),
        ...(deviceCount > 1 ? { hostOptions: { deviceCount } } : {}),
        resources: graph.poolResources,
      },
      expectedFrames: graph.frames,
      prepareRun: async () => {
        await createOutputDirectory(options.outDir, '--out');
        await removeStaleStaging(options.outDir);
      },
      summary: () => runSummaryLines(graph, cloud.source, options.rateHz),
    };
  },
};

export default scanToVolumeModule;
