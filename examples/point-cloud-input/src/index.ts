export { bunnyPoints, loadPoints, POINT_FILE_EXTENSIONS } from './load-points.js';
export type { PointCloud } from './load-points.js';
export { plyPositions } from './ply-points.js';
export { xyzPositions } from './xyz-points.js';
export type { XyzPoints } from './xyz-points.js';
export { lasPositions } from './las-points.js';
