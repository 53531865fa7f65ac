import { ErrorCode, HsError } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { ImageSource, MAX_RATE_HZ, MIN_RATE_HZ } from '../src/operators/image-source.js';
import { DEFAULT_IMAGE_BOUNDS } from '../src/pipeline.js';
import { patternRgba } from './fixture-images.js';

const image = { name: 'pattern', width: 4, height: 4, data: patternRgba(4, 4) };

function construct(rateHz: number): ImageSource {
  return new ImageSource('source', { images: [image], frames: 1, rateHz, bounds: DEFAULT_IMAGE_BOUNDS });
}

describe('ImageSource rate bounds', () => {
  it.each([1e-300, MIN_RATE_HZ / 2, 0, -5, MAX_RATE_HZ * 1.5, Number.POSITIVE_INFINITY, Number.NaN])(
    'throws a typed InvalidArgument (not a RangeError from the period) for rateHz %d',
    (rateHz) => {
      let thrown: unknown;
      try {
        construct(rateHz);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(HsError);
      expect((thrown as HsError).code).toBe(ErrorCode.InvalidArgument);
      expect((thrown as HsError).message).toMatch(/source: rateHz must be from 0\.001 to 1000000 Hz/);
    },
  );

  it('accepts both ends of the documented range', () => {
    expect(construct(MIN_RATE_HZ)).toBeInstanceOf(ImageSource);
    expect(construct(MAX_RATE_HZ)).toBeInstanceOf(ImageSource);
  });
});
