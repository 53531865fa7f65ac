export { loadAddon } from './load-addon.js';
export type { AddonLoad, AddonSpec } from './load-addon.js';
