export { loadAddon } from './load-addon.js';
export type { AddonLoad, AddonSpec } from './load-addon.js';
export { PREBUILT_FLOORS, PREBUILT_PLATFORMS, prebuiltPackage, prebuiltPlatform } from './prebuilt.js';
