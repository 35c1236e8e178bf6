// CPU priority of Hearth's own inference threads (embedding, Whisper): the scheduler's idle class
// (SCHED_IDLE), below every normal thread. They still get every idle core, but when the HTTP thread
// wakes it takes the core at once: at nice 10 alone it could wait for the inference thread's time
// slice (/health p99 while 2 h of audio was transcribed: 1.2-1.7 ms at nice 10, 0.4 ms idle class,
// 0.3 ms with nothing running). On Linux both are per thread, and the threads the caller starts later
// (ONNX Runtime's pool) inherit them. Parsing stays a normal class child at nice 5 (launch.ts): it
// must keep going ahead of inference so that another workspace's upload is not stuck behind it.
import { dlopen, FFIType, ptr } from "bun:ffi";

const SCHED_IDLE = 5;

/**
 * Moves the calling thread to the idle scheduling class, at nice `nice` (what counts if the class
 * cannot be changed); where neither can be done it keeps the normal priority.
 */
export function lowerThreadPriority(nice = 10): void {
  if (process.platform !== "linux") return;
  try {
    const libc = dlopen("libc.so.6", {
      gettid: { args: [], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
      sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    });
    libc.symbols.setpriority(0 /* PRIO_PROCESS */, libc.symbols.gettid(), nice);
    const param = new Int32Array([0]); // struct sched_param { int sched_priority } (0 for SCHED_IDLE)
    libc.symbols.sched_setscheduler(0 /* this thread */, SCHED_IDLE, ptr(param));
    libc.close();
  } catch {
    // Not glibc: the normal priority stays.
  }
}
