// Minimal structured log lines on stderr; stdout stays for what a person must read (first password).
export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(quiet = false): Logger {
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (quiet && level !== "error") return;
    process.stderr.write(JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields }) + "\n");
  };
  return {
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
