// CPU priority of Hearth's own helper threads. Inference (embedding, Whisper) runs at a lower
// priority (nice 10) than the HTTP thread: it still gets every idle core, but a request no longer
// waits behind it for a time slice. On Linux the nice value is per thread, and what the thread
// starts later (ONNX Runtime's pool threads, child processes) inherits it.
import { dlopen, FFIType } from "bun:ffi";

/** Lowers the calling thread's priority to `nice`; where that cannot be done it keeps the normal one. */
export function lowerThreadPriority(nice = 10): void {
  if (process.platform !== "linux") return;
  try {
    const libc = dlopen("libc.so.6", {
      gettid: { args: [], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    libc.symbols.setpriority(0 /* PRIO_PROCESS */, libc.symbols.gettid(), nice);
    libc.close();
  } catch {
    // Not glibc: the normal priority stays.
  }
}
