/**
 * NanoVDB's quantization of a leaf's 512 float values (Fp4, Fp8, Fp16, FpN), without dithering, so hs writes the
 * same codes NanoVDB's host builder writes: per leaf, `minimum` and `maximum` over all 512 values (inactive ones
 * hold the background), `quantum = (maximum - minimum) / (2^bits - 1)` and `code = trunc(encode * (v - minimum) + 0.5)`
 * with `encode = (2^bits - 1) / (maximum - minimum)`, in f32 arithmetic below 16 bits and f64 at 16. A leaf of one
 * value has quantum 0 and codes 0. FpN picks the fewest bits (1, 2, 4, 8, else 16) whose decoded values all lie
 * within an absolute tolerance of the exact ones, as NanoVDB's `AbsDiff` oracle does.
 * Spec: NANOVDB-FORMAT.md (leaves); the facts of NanoVDB's LeafData<Fp*> and its host builder.
 */
import { Leaf } from '../grid/grid-layout.js';

const f = Math.fround;

function extrema(values: Float32Array): [number, number] {
  let min = 3.4028234663852886e38;
  let max = -min;
  for (let j = 0; j < 512; j++) {
    const x = values[j] as number;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return [min, max];
}

/** The code of `x` (the conversion of NaN, from a leaf of one value, gives 0 as on x86). */
function code(encode: number, x: number, min: number, wide: boolean): number {
  const c = wide ? encode * f(x - min) + 0.5 : f(f(encode * f(x - min)) + 0.5);
  return Number.isNaN(c) ? 0 : Math.trunc(c);
}

/** Writes the quantized leaf's minimum, quantum and `bits`-bit codes (at byte 96) for `values`, one per voxel. */
export function quantizeLeaf(v: DataView, leaf: number, values: Float32Array, bits: number): void {
  const [min, max] = extrema(values);
  const units = 2 ** bits - 1;
  const range = f(max - min);
  v.setFloat32(leaf + Leaf.quantMinimum, min, true);
  v.setFloat32(leaf + Leaf.quantQuantum, f(range / units), true);
  const wide = bits === 16;
  const encode = wide ? units / range : f(units / range);
  const codes = leaf + 96;
  for (let j = 0; j < 512; j++) {
    const c = code(encode, values[j] as number, min, wide);
    if (wide) v.setUint16(codes + 2 * j, c, true);
    else {
      const bit = j * bits;
      const at = codes + (bit >> 3);
      v.setUint8(at, v.getUint8(at) | (c << (bit & 7)));
    }
  }
}

/** FpN's bits for `values`: the fewest of 1, 2, 4, 8 whose decoded values lie within `tolerance` of each value, else 16. */
export function fpnBits(values: Float32Array, tolerance: number): number {
  const [min, max] = extrema(values);
  const range = f(max - min);
  let log2 = 0;
  while (range > 0 && log2 < 4) {
    const mask = 2 ** (1 << log2) - 1;
    const encode = f(mask / range);
    const decode = f(range / mask);
    let j = 0;
    for (; j < 512; j++) {
      const exact = values[j] as number;
      const approx = f(f(code(encode, exact, min, false) * decode) + min);
      if (!(Math.abs(f(exact - approx)) <= tolerance)) break;
    }
    if (j === 512) break;
    log2++;
  }
  return 1 << log2;
}
