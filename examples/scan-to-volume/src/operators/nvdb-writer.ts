import { type ExecutionContext, type InputPort, Operator, type OperatorSpec } from '@hs/compiler';
import { encodeNvdb, validateGrids, type NvdbCodec } from '@hs/nanovdb-mr';
import { MemoryKind, OK_VOID, errWithContext, writeFileAtomic, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';

/**
 * Host-only sink: writes every grid it receives (pinnedHost uint8, a NanoVDB grid's bytes) to one `.nvdb`
 * file, replacing the previous one atomically (`writeFileAtomic` of @hs/streams: a staging file
 * `<path>.<pid>.<random>.hs-staging` created with O_EXCL|O_NOFOLLOW, then a rename; a symlink planted at
 * `path` is replaced, never written through; a symlinked folder is refused), so the file on disk is always a complete volume of the scans so far and, after the run, of the whole cloud. Each grid
 * is validated (`validateGrids`, checksum included) before it is encoded (`encodeNvdb`, codec `zip` or
 * `none`) into one file buffer the writer keeps (the largest file so far), so a run of same-sized grids
 * allocates no file bytes per grid. Writes use `fs/promises`: the JS thread never blocks.
 *
 * Errors: the validation's InvalidArgument (a corrupt grid, naming the field); when the file cannot be
 * written, `writeFileAtomic`'s error naming the path and OS code (NotFound, PermissionDenied or
 * InvalidArgument; InvalidArgument for a symlinked folder), with no staging file left behind.
 */
export class NvdbWriter extends Operator {
  /** Input port `grid`: pinnedHost uint8 rank 1. */
  grid!: InputPort;
  private count = 0;
  private lastBytes = 0;
  /** The file buffer encodes write into; replaced by a larger one when a file does not fit. */
  private fileBuffer: Uint8Array | undefined = undefined;

  /** @param path the `.nvdb` file; its folder must exist when the first grid arrives. */
  constructor(
    name: string,
    readonly path: string,
    private readonly codec: NvdbCodec,
  ) {
    super(name);
  }

  /** Grids written so far. */
  get written(): number {
    return this.count;
  }

  /** Bytes of the file as last written (0 before the first grid). */
  get fileBytes(): number {
    return this.lastBytes;
  }

  setup(spec: OperatorSpec): void {
    this.grid = spec.input('grid', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
  }

  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const grid = ctx.receive(this.grid);
    if (grid === undefined) return OK_VOID;
    const bytes = grid.hostView();
    if (!bytes.ok) return bytes;
    const grids = validateGrids(bytes.value);
    if (!grids.ok) return errWithContext(grids.error, `${this.name}: received grid`);
    const file = encodeNvdb(bytes.value, grids.value, this.codec, this.fileBuffer);
    if (!file.ok) return file;
    if (file.value.buffer !== this.fileBuffer?.buffer) this.fileBuffer = file.value;
    await writeFileAtomic(this.path, file.value); // a rejection (HsError) fails this activation
    this.count += 1;
    this.lastBytes = file.value.byteLength;
    return OK_VOID;
  }

  /** Drops the kept file buffer. */
  override stop(): Result<void> {
    this.fileBuffer = undefined;
    return OK_VOID;
  }
}
