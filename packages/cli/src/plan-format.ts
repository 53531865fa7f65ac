import { extname } from 'node:path';
import { refuseUnwritableExtension } from '@hs/cli-options';
import { ErrorCode, err, ok, type Result } from '@hs/streams';

/** Renderings of `hs plan`. */
export type PlanFormat = 'text' | 'json' | 'dot' | 'svg' | 'html';

/** The formats, in the order `hs plan --help` lists them. */
export const PLAN_FORMATS: readonly PlanFormat[] = Object.freeze(['text', 'json', 'dot', 'svg', 'html']);

/** The file extension (lower case, with its dot) that names each format in `-o <file>`. */
const EXTENSIONS: Readonly<Record<PlanFormat, string>> = Object.freeze({ text: '.txt', json: '.json', dot: '.dot', svg: '.svg', html: '.html' });

/**
 * The format `hs plan` renders: the format flag when one is given, else the one `outFile`'s extension
 * names (`.txt`, `.json`, `.dot`, `.svg`, `.html`, any case), else `text`.
 *
 * @param flag - the format flag given (`--svg` is `'svg'`), or `undefined`.
 * @param outFile - the `-o` file, or `undefined` for standard output.
 * @returns the format; `ErrorCode.InvalidArgument` when, without a flag, `outFile` has an extension no
 *   format writes (`-o plan.png`; `--json -o plan.out` is taken), or when the flag and the extension name
 *   different formats (`--text -o plan.svg`), saying which flag or file name to change.
 */
export function choosePlanFormat(flag: PlanFormat | undefined, outFile: string | undefined): Result<PlanFormat> {
  if (flag === undefined && outFile !== undefined) {
    const writable = refuseUnwritableExtension('-o', outFile, Object.values(EXTENSIONS));
    if (!writable.ok) return writable;
  }
  const extension = outFile === undefined ? '' : extname(outFile).toLowerCase();
  const named = PLAN_FORMATS.find((format) => EXTENSIONS[format] === extension);
  if (flag === undefined) return ok(named ?? 'text');
  if (named === undefined || named === flag) return ok(flag);
  return err(
    ErrorCode.InvalidArgument,
    `--${flag} renders ${flag}, but the extension of -o ${outFile} asks for ${named}; drop --${flag} (the extension picks the format) or write to a ${EXTENSIONS[flag]} file`,
  );
}
