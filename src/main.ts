// Hearth's entry point and CLI: the only file that acts on start.
//   config → storage (lock, migrate) → services → app → listen; graceful stop on SIGINT/SIGTERM.
// The server's modules (the database's too) are imported when a command needs them, so `--help`
// and the internal children (`__parse`, one per ingested file; `__extract-native`) start without loading them.
import { loadConfig, ConfigError, SETTINGS, type Config } from "./platform/config";
import pkg from "../package.json";
import { existsSync } from "node:fs";
import { join } from "node:path";

const VERSION: string = pkg.version;

const HELP = `Hearth ${VERSION}: self-hosted agent workspace platform

Usage:
  hearth serve [options]     start the server (the default command)
  hearth backup <file>       write a checked copy of the database (safe while Hearth runs)
  hearth reset-password <email>
                             give the account a new random password, printed once, and end
                             its sessions (safe while Hearth runs; for a lost owner password)
  hearth --help | --version

Options of serve, backup and reset-password (each also an environment variable; options win):
${options()}
`;

/** The settings as three columns, each as wide as its longest entry. */
function options(): string {
  const flags = SETTINGS.map((s) => `${s.flag} <value>`);
  const [flagWidth, envWidth] = [Math.max(...flags.map((f) => f.length)) + 2, Math.max(...SETTINGS.map((s) => s.env.length)) + 2];
  return SETTINGS.map((s, i) => `  ${flags[i]!.padEnd(flagWidth)}${s.env.padEnd(envWidth)}${s.help}${s.default ? ` (default ${s.default})` : ""}`).join("\n");
}

/**
 * The binary starts with JavaScriptCore's tier-up thresholds raised (build.ts `jitPolicy`), so code
 * that runs once at start stays in the interpreter instead of being compiled and kept; from here
 * on the normal policy applies. A no-op when run from source.
 */
function startupDone() {
  Bun.unsafe.setJITPolicy(1);
}

function fail(message: string): never {
  process.stderr.write(`hearth: ${message}\n`);
  process.exit(2);
}

/** Why Hearth cannot listen at the configured address, in words (undefined: some other failure). */
function cannotListen(e: unknown, config: Config): string | undefined {
  const code = (e as { code?: string }).code;
  if (code === "EADDRINUSE") return `${config.host}:${config.port} is in use by another program (another Hearth?): stop it, or choose another port with --port or HEARTH_PORT`;
  if (code === "EINVAL" || code === "EADDRNOTAVAIL" || code === undefined) return `cannot listen on ${config.host}:${config.port}: not an address of this machine, or not free (--host, --port)`;
  return undefined;
}

/**
 * Tries the address before anything is created or printed, so a start that cannot listen leaves
 * no data dir behind and no first owner whose password scrolled past. (The listen itself still
 * checks: another program may take the port in between.)
 */
function probeAddress(config: Config) {
  if (config.port === 0) return; // any free port
  try {
    Bun.listen({ hostname: config.host, port: config.port, socket: { data() {} } }).stop(true);
  } catch (e) {
    fail(cannotListen(e, config) ?? `cannot listen on ${config.host}:${config.port}: ${(e as Error).message}`);
  }
}

/**
 * How long a stop waits for requests in flight (an upload, a transcription) before it cuts them:
 * within the 10 s a container runtime gives before it kills, so the database still closes cleanly.
 */
const STOP_GRACE_MS = 8_000;

async function serve(config: Config) {
  probeAddress(config);
  const [{ ensureDataDir, lockDataDir, openStorage }, { migrate }, { checkSecretKeyBeforeMigrating }, { createLogger }, { createServices }, { createApp, listenOptions }, { endAllStreams }] = await Promise.all([
    import("./platform/db/database"),
    import("./platform/db/migrate"),
    import("./platform/secrets"),
    import("./platform/log"),
    import("./services"),
    import("./app"),
    import("./platform/http/sse"),
  ]);
  const log = createLogger();
  ensureDataDir(config.dataDir);
  const lock = lockDataDir(config.dataDir);
  // Where the binary extracts native libraries it cannot load from inside itself (read by the
  // ONNX Runtime loader that build.ts bundles; workers share this environment).
  process.env.HEARTH_NATIVE_DIR = join(config.dataDir, "native");
  const storage = await openStorage(config.dataDir);
  // Before the migration: a start refused for its secret key leaves the database as the older
  // Hearth left it, so that one can still be started on it.
  checkSecretKeyBeforeMigrating(config.secretKey, config.dataDir, storage.sqlite);
  migrate(storage.db);
  const services = await createServices({ config, storage, log });
  if (services.bootstrap) {
    const b = services.bootstrap;
    process.stdout.write(
      b.generatedPassword
        ? `\nHearth created the first owner ${b.email} with the password\n\n    ${b.generatedPassword}\n\nIt is shown only this once: sign in and keep it safe.\n\n`
        : `\nHearth created the first owner ${b.email} with the password from HEARTH_ADMIN_PASSWORD.\n\n`,
    );
  }
  services.start();
  storage.startCheckpointer(log);
  const app = createApp(services);
  try {
    app.listen(listenOptions(config.host, config.port, log));
  } catch (e) {
    const problem = cannotListen(e, config);
    if (problem) fail(problem);
    throw e;
  }
  const server = app.server!;
  log.info("hearth listening", { url: `http://${server.hostname}:${server.port}`, dataDir: config.dataDir, version: VERSION });
  process.stdout.write(`Hearth ${VERSION} listening on http://${server.hostname}:${server.port} (docs at /docs)\n`);
  startupDone();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    // No new connection; requests in flight finish, for at most STOP_GRACE_MS. Streams never end by
    // themselves, so they end first (event and chat streams here, MCP sessions with the services):
    // an open one held the stop for as long as its client stayed.
    const drained = server.stop(false);
    endAllStreams();
    services.mcp.gateway.stop();
    const late = await Promise.race([drained.then(() => false), Bun.sleep(STOP_GRACE_MS).then(() => true)]);
    if (late) {
      log.warn("stopping: requests still in flight are cut", { after_ms: STOP_GRACE_MS });
      await server.stop(true);
    }
    await services.stop();
    await storage.close();
    lock.release();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

async function backup(config: Config, file: string | undefined) {
  if (!file) fail("backup needs a target file: hearth backup <file>");
  // Opening the database would create an empty one, and a wrong data dir would back that up.
  const database = join(config.dataDir, "hearth.db");
  if (!existsSync(database)) fail(`no Hearth database at ${database}: point HEARTH_DATA_DIR (or --data-dir) at the data dir of the Hearth to back up`);
  const [{ openStorage }, { backupDatabase }] = await Promise.all([import("./platform/db/database"), import("./features/system/backup")]);
  // No instance lock: a backup reads one consistent snapshot while the server keeps writing.
  const storage = await openStorage(config.dataDir);
  try {
    const result = backupDatabase(storage.sqlite, file);
    process.stdout.write(`backup written to ${result.file} (${result.bytes} bytes, integrity ok)\n`);
  } finally {
    await storage.close();
  }
}

async function resetPassword(config: Config, email: string | undefined) {
  if (!email) fail("reset-password needs the account's email: hearth reset-password <email>");
  const database = join(config.dataDir, "hearth.db");
  if (!existsSync(database)) fail(`no Hearth database at ${database}: point HEARTH_DATA_DIR (or --data-dir) at the data dir of the Hearth`);
  const [{ openStorage }, { schemaDates }, { systemClock }, { createActivityService }, { createAccountsService }, { randomPassword }] = await Promise.all([
    import("./platform/db/database"),
    import("./platform/db/migrate"),
    import("./platform/clock"),
    import("./features/activity/service"),
    import("./features/accounts/service"),
    import("./features/accounts/bootstrap"),
  ]);
  // Only on the schema of this build: it neither migrates a database an older Hearth uses (which
  // could then no longer start on it) nor writes into one it does not know.
  const storage = await openStorage(config.dataDir);
  try {
    const { last, newest } = schemaDates(storage.db);
    const day = (t: number | null) => (t === null ? "none" : new Date(t).toISOString());
    if (last !== newest) {
      fail(
        last !== null && last > newest
          ? `${database} was written by a newer Hearth (schema ${day(last)}; this build knows up to ${day(newest)}): use that version's reset-password`
          : `${database} is from an older Hearth (schema ${day(last)}; this build's is ${day(newest)}): use that version's reset-password, or start this version once (it migrates the database), then run this again`,
      );
    }
    const activity = createActivityService({ db: storage.db, clock: systemClock });
    const accounts = createAccountsService({ db: storage.db, clock: systemClock, activity });
    const password = randomPassword();
    const user = await accounts.resetPassword(email, password).catch((e) => {
      if ((e as { status?: number }).status === 404) fail(`no user with the email ${email.trim().toLowerCase()} in ${database}`);
      throw e;
    });
    process.stdout.write(`\nThe new password of ${user.email} is\n\n    ${password}\n\nIt is shown only this once. Every session of the account has ended; its API tokens still work.\n\n`);
  } finally {
    await storage.close();
  }
}

async function main(argv: string[]) {
  const [command = "serve", ...rest] = argv;
  const asksHelp = (a: string) => a === "--help" || a === "-h" || a === "help";
  const withArgument = command === "backup" || command === "reset-password";
  // `hearth serve --help`, `hearth backup --help` as well: the one help covers every command.
  if (asksHelp(command) || ((command === "serve" || withArgument) && rest.some(asksHelp))) return void process.stdout.write(HELP);
  if (command === "--version" || command === "-v") return void process.stdout.write(`${VERSION}\n`);
  const positional = withArgument ? rest.filter((a, i) => !a.startsWith("--") && !(rest[i - 1]?.startsWith("--") && !rest[i - 1]!.includes("="))) : [];
  const options = withArgument ? rest.filter((a) => !positional.includes(a)) : rest;
  // Internal: the isolated document parser that ingestion runs as a child process.
  if (command === "__parse") {
    startupDone();
    return (await import("./features/knowledge/ingest/isolate")).runParseChild(rest[0] ?? "");
  }
  // Internal: writes the ONNX Runtime's native files out of the binary (scripts/ml-build-plugin.ts),
  // so that the server which asks for them never reads their bytes itself.
  if (command === "__extract-native") {
    if (!rest[0]) fail("__extract-native needs the directory to extract into");
    return void (await import("hearth-ml-native")).extractNative(rest[0]);
  }
  if (command.startsWith("--")) return serve(loadConfig(process.env, argv));
  if (command === "serve") return serve(loadConfig(process.env, options));
  if (command === "backup") return backup(loadConfig(process.env, options), positional[0]);
  if (command === "reset-password") return resetPassword(loadConfig(process.env, options), positional[0]);
  fail(`unknown command "${command}" (see hearth --help)`);
}

main(process.argv.slice(2)).catch(async (e) => {
  if (e instanceof ConfigError || e instanceof (await import("./platform/db/database")).InstanceLockedError) fail(e.message);
  // A start on a full or failing disk says so and what to do, like the requests it would answer.
  const storage = (await import("./platform/db/write-failures")).storageFailure(e);
  let root = e as { message?: unknown; cause?: unknown };
  while (root.cause && typeof root.cause === "object") root = root.cause as typeof root; // SQLite's own words, not its wrapper's
  if (storage === "full") fail(`could not start: the disk of the data dir is full (${String(root.message)}): free space there, then start again`);
  if (storage === "io") fail(`could not start: disk I/O error on the data dir's disk (${String(root.message)}): check the disk (the system log names it)`);
  fail(`could not start: ${(e as Error).message}`);
});
