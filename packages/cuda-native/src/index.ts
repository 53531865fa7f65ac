export { loadCudaNative } from './load-cuda-native.js';
export type { CudaNativeLoad } from './load-cuda-native.js';
export { CudaStatus, ResourceStatus } from './binding.js';
export type { CudaNativeBinding, CudaNativeBenchBinding, RuntimeInfo, DeviceProperties, TensorV1Descriptor, OpenedMemoryResource } from './binding.js';
export { addCudaTestKernels, loadCudaTestAddon } from './cuda-test-addons.js';
export type { CudaTestKernels } from './cuda-test-addons.js';
