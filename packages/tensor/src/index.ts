export { DType, DTypeCode } from './dtype.js';
export { Tensor } from './tensor.js';
export type { TensorInit, TensorImportOptions } from './tensor.js';
export type { TensorBacking } from './tensor-backing.js';
export { DLDeviceType, DLPACK_FLAG_IS_COPIED, DLPACK_FLAG_READ_ONLY, DLPACK_VERSION, exportDLPack, importDLPack } from './dlpack.js';
export type { DLPackExportOptions, DLPackImportOptions, DLPackManagedTensor, DLPackTensorFields } from './dlpack.js';
