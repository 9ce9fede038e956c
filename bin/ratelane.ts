#!/usr/bin/env -S npx tsx
/**
 * ratelane's command line: `ratelane <command> [options]`. The product's commands live in lib/cli,
 * the workbench's beside them (workbench/commands.ts: one module each, loaded only when it runs); this
 * entry looks the command up, runs it, and exits with its code.
 */
import { runCli } from '../lib/cli/index.js';
import { COMMANDS, NPM_HELP } from '../workbench/commands.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** True once Ctrl-C (or SIGTERM) started the local stack's shutdown. */
async function shutdownInProgress(): Promise<boolean> {
  const { isShuttingDown } = await import('../workbench/local-stack/services/processes.js');
  return isShuttingDown();
}

/** Runs the command named by the first argument; resolves the exit code. */
function main(argv: string[]): Promise<number> {
  return runCli(COMMANDS, argv, { stdout: process.stdout, stderr: process.stderr }, NPM_HELP);
}

main(process.argv.slice(2)).then(
  async (code) => {
    if (!(await shutdownInProgress())) process.exit(code);
  },
  async (error: unknown) => {
    // After Ctrl-C the signal handler stops everything and exits 130; errors of the work it tore down are expected.
    if (await shutdownInProgress()) return;
    const e = error as Error;
    process.stderr.write(`ratelane: ${e.name ?? 'Error'}: ${e.message ?? String(error)}\n`);
    process.exit(1);
  },
);
