export { loadCudaNative } from './load-cuda-native.js';
export type { CudaNativeLoad } from './load-cuda-native.js';
export { CudaStatus } from './binding.js';
export type { CudaNativeBinding, RuntimeInfo, DeviceProperties } from './binding.js';
