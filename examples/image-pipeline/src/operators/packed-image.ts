import { ErrorCode, OK_VOID, err, type Result } from '@hs/streams';
import type { InputPort } from '@hs/compiler';
import type { Tensor } from '@hs/tensor';

/**
 * Checks that a received image tensor is packed row-major: shape `[H, W]` (`channels` 1) or
 * `[H, W, channels]`, strides equal to the packed strides, in elements. The kernels index pixels as
 * `y * W + x`, so any padding or transposed view would be misread.
 * @returns `ErrorCode.ProtocolError` naming the port (`operator.port`) and the layout that was received.
 */
export function checkPackedImage(tensor: Tensor, port: InputPort, channels: 1 | 4): Result<void> {
  const { shape, strides } = tensor;
  const rank = channels === 1 ? 2 : 3;
  const packed =
    shape.length === rank &&
    strides.length === rank &&
    strides[rank - 1] === 1 &&
    (channels === 1 || (shape[2] === channels && strides[1] === channels)) &&
    strides[0] === shape[1]! * channels;
  if (packed) return OK_VOID;
  const expected = channels === 1 ? '[H, W]' : `[H, W, ${channels}]`;
  return err(
    ErrorCode.ProtocolError,
    `${port.key}: expected a packed ${expected} image, received shape [${shape.join(', ')}] strides [${strides.join(', ')}]`,
  );
}
