/**
 * Child-process hygiene for the local stack: every process we start is registered here and is stopped
 * on normal exit, on SIGINT/SIGTERM/SIGHUP and on an uncaught crash (unless a crash handler takes the
 * crash over to report first, within a hard limit). Also the busy loops of a starved soak. A watchdog shell also kills the
 * child when this Node process disappears without running any handler (SIGKILL, OOM): no Java is ever
 * left behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();
const cleanups = new Set<() => Promise<void> | void>();
const crashHandlers = new Set<(error: unknown) => boolean>();
let hooksInstalled = false;
let shuttingDown = false;

/** True once a shutdown signal arrived: errors of work being torn down are expected then. */
export function isShuttingDown(): boolean {
  return shuttingDown;
}

function killAllSync(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  children.clear();
}

async function runCleanups(): Promise<void> {
  const pending = [...cleanups];
  cleanups.clear();
  await Promise.allSettled(pending.map(async (fn) => fn()));
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      shuttingDown = true;
      void runCleanups().finally(() => {
        killAllSync();
        process.exit(signal === 'SIGINT' ? 130 : 143);
      });
      // A second signal, or cleanups that hang, must not keep anything alive.
      setTimeout(() => {
        killAllSync();
        process.exit(1);
      }, 5_000).unref();
    });
  }
  process.on('uncaughtException', (error) => {
    console.error(error);
    // A driver that must still report (the soak) may take the crash over: it ends its run and reports,
    // within a hard limit; otherwise every child dies now.
    let handled = false;
    for (const handler of [...crashHandlers]) {
      try {
        handled = handler(error) || handled;
      } catch {
        /* a crash handler must not hide the crash */
      }
    }
    if (handled) {
      setTimeout(() => {
        killAllSync();
        process.exit(1);
      }, CRASH_REPORT_LIMIT_MS).unref();
      return;
    }
    killAllSync();
    process.exit(1);
  });
}

/** How long a crash handler that took a crash over has to report and exit before everything is killed. */
const CRASH_REPORT_LIMIT_MS = 180_000;

/**
 * Registers a handler for an uncaught exception (or unhandled rejection). Returning true takes the crash
 * over: the process is not exited at once, and the handler's owner must end its work, report and exit
 * (non-zero) within {@link CRASH_REPORT_LIMIT_MS}, after which children are killed and the process exits 1.
 * Returns a function that unregisters it.
 */
export function onCrash(handler: (error: unknown) => boolean): () => void {
  installHooks();
  crashHandlers.add(handler);
  return () => crashHandlers.delete(handler);
}

/**
 * Registers an async cleanup to run on Ctrl-C / SIGTERM (normal paths call their own stop functions).
 * Returns a function that unregisters it.
 */
export function onShutdown(fn: () => Promise<void> | void): () => void {
  installHooks();
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/**
 * Spawns a long-lived child process that is guaranteed not to outlive this process.
 *
 * @returns the child and a `stop()` that kills it (SIGTERM, then SIGKILL after `graceMs`).
 */
export function spawnSupervised(
  command: string,
  args: string[],
  options: { cwd?: string; graceMs?: number; env?: NodeJS.ProcessEnv } = {},
): { child: ChildProcess; stop: () => Promise<void> } {
  installHooks();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const watchdog = spawnWatchdog(child.pid);

  const stop = async (): Promise<void> => {
    watchdog?.kill('SIGKILL');
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.graceMs ?? 2_000);
    await exited;
    clearTimeout(timer);
    children.delete(child);
  };
  return { child, stop };
}

/** A tiny detached shell that kills `pid` as soon as this Node process is gone. */
function spawnWatchdog(pid: number | undefined): ChildProcess | undefined {
  if (pid === undefined || process.platform === 'win32') return undefined;
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${pid} 2>/dev/null; do sleep 1; done; kill -9 ${pid} 2>/dev/null; exit 0`;
  const watchdog = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  watchdog.unref();
  children.add(watchdog);
  watchdog.once('exit', () => children.delete(watchdog));
  return watchdog;
}

/** Busy-loop child processes that compete for the CPUs (a starved machine, on purpose). */
export interface BusyLoops {
  readonly pids: number[];
  /** Kills them (idempotent); resolves when they are gone. */
  stop(): Promise<void>;
}

/**
 * Starts `count` child processes that spin (`node -e "for(;;){}"`). They are supervised like every
 * child here: killed on normal exit, on Ctrl-C / SIGTERM / SIGHUP, on a crash, and by a watchdog when
 * this process dies outright.
 */
export function startBusyLoops(count: number): BusyLoops {
  const loops = Array.from({ length: count }, () => spawnSupervised(process.execPath, ['-e', 'for(;;){}'], { graceMs: 500 }));
  const unregister = onShutdown(() => stop());
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= Promise.allSettled(loops.map((loop) => loop.stop())).then(() => {
      unregister();
    });
    return stopping;
  };
  return { pids: loops.flatMap((loop) => (loop.child.pid === undefined ? [] : [loop.child.pid])), stop };
}
