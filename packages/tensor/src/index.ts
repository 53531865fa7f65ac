export { DType, DTypeCode } from './dtype.js';
export { Tensor } from './tensor.js';
export type { TensorInit, TensorImportOptions } from './tensor.js';
export type { TensorBacking } from './tensor-backing.js';
