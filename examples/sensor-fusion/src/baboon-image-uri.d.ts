/** Types for `baboon-image-uri`, which ships none: its CommonJS export is one string. */
declare module 'baboon-image-uri' {
  /** `data:image/png;base64,...`: the 128x128 mandrill test photo as a PNG data URI. */
  const dataUri: string;
  export default dataUri;
}
