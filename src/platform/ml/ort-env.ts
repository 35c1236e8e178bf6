// Imported before transformers.js in every inference worker: ONNX Runtime 1.30 reads
// getenv("ORT_DISABLE_TELEMETRY") from the C environment, which process.env writes do not reach
// under Bun, and would otherwise write telemetry files under ~/.cache and $TMPDIR.
import { dlopen, FFIType, ptr } from "bun:ffi";

try {
  const libc = dlopen("libc.so.6", { setenv: { args: [FFIType.ptr, FFIType.ptr, FFIType.i32], returns: FFIType.i32 } });
  libc.symbols.setenv(ptr(Buffer.from("ORT_DISABLE_TELEMETRY\0")), ptr(Buffer.from("1\0")), 0);
  libc.close();
} catch {
  // Not glibc: nothing to do; telemetry files are the only consequence.
}
