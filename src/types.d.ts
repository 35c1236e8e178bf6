// Module shapes for files Bun imports as text (migrations) or as embedded file paths.
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/*.js" {
  const path: string;
  export default path;
}

/** The ONNX Runtime loader that build.ts bundles into the binary (scripts/ml-build-plugin.ts); absent from source runs. */
declare module "hearth-ml-native" {
  /** Writes the embedded native files under `base` (once; a complete copy is kept) and returns their directory. */
  export function extractNative(base: string): string;
}
