declare module 'bunny' {
  /** Vertex positions of the Stanford bunny scan. */
  export const positions: [number, number, number][];
  /** Triangles as vertex index triplets. */
  export const cells: [number, number, number][];
  const bunny: { positions: [number, number, number][]; cells: [number, number, number][] };
  export default bunny;
}
