import { Command, Option } from 'commander';
import { RunSession, formatMetrics } from '@hs/runtime';
import { ErrorCode, HsError, OK_VOID, err, ok, type Result } from '@hs/streams';
import { loadBundledMandrill, loadImageFiles, type RgbaImage } from './image-input.js';
import { DEFAULT_IMAGE_BOUNDS, buildImagePipeline } from './pipeline.js';

/** Command-line options after validation. */
interface CliOptions {
  readonly inputs: readonly string[] | undefined;
  readonly frames: number;
  readonly rateHz: number;
  readonly outDir: string;
  readonly backend: 'host' | 'cuda' | undefined;
}

const program = new Command('hs-image-pipeline')
  .description(
    'Runs photos through grayscale and a 2x downscale on the hs runtime, then writes PNGs and prints pixel statistics.',
  )
  .option('--input <files...>', 'PNG or JPEG files, detected by content (default: the bundled 128x128 mandrill photo)')
  .option('--frames <n>', 'frames the source emits, cycling through the inputs', '8')
  .option('--rate <hz>', 'nominal source rate in frames per second', '30')
  .option('--out <dir>', 'directory for frame-00000.png, frame-00001.png, ...', './out')
  .addOption(
    new Option('--backend <name>', 'host (pure TypeScript) or cuda; default: HS_BACKEND, then auto-detect').choices(['host', 'cuda']),
  );

/** Validates commander's raw strings. @returns `ErrorCode.InvalidArgument` naming the bad option. */
function parseOptions(raw: Record<string, unknown>): Result<CliOptions> {
  const frames = Number(raw['frames']);
  if (!Number.isSafeInteger(frames) || frames <= 0) {
    return err(ErrorCode.InvalidArgument, `--frames must be a positive integer, got '${String(raw['frames'])}'`);
  }
  const rateHz = Number(raw['rate']);
  if (!Number.isFinite(rateHz) || rateHz <= 0) {
    return err(ErrorCode.InvalidArgument, `--rate must be a positive number of frames per second, got '${String(raw['rate'])}'`);
  }
  return ok({
    inputs: raw['input'] as string[] | undefined,
    frames,
    rateHz,
    outDir: raw['out'] as string,
    backend: raw['backend'] as 'host' | 'cuda' | undefined,
  });
}

async function loadImages(inputs: readonly string[] | undefined): Promise<Result<readonly RgbaImage[]>> {
  if (inputs === undefined) {
    const mandrill = loadBundledMandrill(DEFAULT_IMAGE_BOUNDS);
    return mandrill.ok ? ok([mandrill.value]) : mandrill;
  }
  return loadImageFiles(inputs, DEFAULT_IMAGE_BOUNDS);
}

async function run(argv: readonly string[]): Promise<Result<void>> {
  program.parse(argv);
  const options = parseOptions(program.opts());
  if (!options.ok) return options;
  const { frames, rateHz, outDir, backend } = options.value;

  const images = await loadImages(options.value.inputs);
  if (!images.ok) return images;
  for (const image of images.value) console.log(`input ${image.name}: ${image.width}x${image.height} RGBA`);

  const pipeline = buildImagePipeline({ images: images.value, frames, rateHz, outDir });
  if (!pipeline.ok) return pipeline;
  console.log(pipeline.value.plan.toText());

  const session = RunSession.create(pipeline.value.plan, { backend });
  if (!session.ok) return session;
  try {
    console.log(`backend: ${session.value.backend.name}`);
    const metrics = await session.value.run();
    if (!metrics.ok) return metrics;
    console.log(formatMetrics(metrics.value));
  } finally {
    session.value.dispose();
  }

  const stats = pipeline.value.statistics.statistics;
  console.log(
    `statistics over ${stats.frames} downscaled frames (${stats.pixels} pixels): ` +
      `mean ${stats.mean.toFixed(2)}  min ${stats.min}  max ${stats.max}`,
  );
  const written = pipeline.value.pngWriter.written;
  console.log(`wrote ${written.length} PNG files to ${outDir}${written.length > 0 ? ` (${written[0]} ... ${written[written.length - 1]})` : ''}`);
  return OK_VOID;
}

/** Prints a typed error (a CompileError's message already lists its diagnostics). */
function report(error: HsError): void {
  console.error(`error: ${error.message}`);
}

try {
  const outcome = await run(process.argv);
  if (!outcome.ok) report(outcome.error);
  process.exitCode = outcome.ok ? 0 : 1;
} catch (thrown) {
  // Programmer errors throw HsError; anything else is a bug worth its stack trace.
  if (!(thrown instanceof HsError)) throw thrown;
  report(thrown);
  process.exitCode = 1;
}
