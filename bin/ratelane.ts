#!/usr/bin/env -S npx tsx
/**
 * ratelane's command line: `local` runs the whole pipeline on local stand-ins; `submit` sends
 * documents to a lane's queue (real AWS, or local endpoints).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Usage: ratelane <command> [options]

Commands:
  local     run the pipeline on the local stack and print a scorecard   (npm run local -- --help)
  submit    submit documents to a region lane's queue                    (npm run submit -- --help)
  resume    resume a paused lane (after a billing pause, or early)        (npm run resume -- --help)
  soak      many jobs with random faults, then a reconciliation         (npm run soak -- --help)
  bench     strategies side by side on the local stack, and overhead     (npm run bench -- --help)
  sim       virtual-time simulator: strategies at scale, no emulators     (npm run sim -- --help)
`;

async function shutdownInProgress(): Promise<boolean> {
  const { isShuttingDown } = await import('../lib/local/processes.js');
  return isShuttingDown();
}

const io = { stdout: process.stdout, stderr: process.stderr };

/**
 * Parses a command's flags and runs it; a usage error (its class given) prints the message and the
 * usage and exits 2, `--help` (an empty message) prints the usage and exits 0.
 */
async function withUsage<O>(usage: string, UsageError: new (...args: never[]) => Error, parse: () => O, run: (options: O) => Promise<number>): Promise<number> {
  let options: O;
  try {
    options = parse();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) process.stderr.write(`error: ${error.message}\n\n`);
    process.stderr.write(usage);
    return error.message ? 2 : 0;
  }
  return run(options);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'local': {
      const { LOCAL_USAGE, LocalRunUsageError, parseLocalRunArgs, runLocal } = await import('../lib/local/run.js');
      return withUsage(LOCAL_USAGE, LocalRunUsageError, () => parseLocalRunArgs(rest), async (options) => {
        const card = await runLocal(options, io);
        return card.lost === 0 && !card.timedOut ? 0 : 1;
      });
    }
    case 'submit': {
      const { runSubmitCommand } = await import('../lib/queue/submit-cli.js');
      const { isKnownPromptVersion, DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION } = await import('../lib/contract/schemas/registry.js');
      return runSubmitCommand(
        rest,
        { stdout: process.stdout, stderr: process.stderr },
        { isKnownVersion: isKnownPromptVersion, defaultVersions: { schemaVersion: DEFAULT_SCHEMA_VERSION, promptVersion: DEFAULT_PROMPT_VERSION } },
      );
    }
    case 'resume': {
      const { runResumeCommand } = await import('../lib/admission/resume-cli.js');
      return runResumeCommand(rest, { stdout: process.stdout, stderr: process.stderr });
    }
    case 'soak': {
      const { SOAK_USAGE, SoakUsageError, parseSoakArgs, runSoak, soakExitCode } = await import('../lib/local/soak.js');
      return withUsage(SOAK_USAGE, SoakUsageError, () => parseSoakArgs(rest), async (options) => soakExitCode(await runSoak(options, io)));
    }
    case 'bench': {
      const { BENCH_USAGE, BenchUsageError, parseBenchArgs, runBench, benchExitCode } = await import('../lib/local/bench.js');
      return withUsage(BENCH_USAGE, BenchUsageError, () => parseBenchArgs(rest), async (options) => benchExitCode(await runBench(options, io), options));
    }
    case 'sim': {
      const { simMain } = await import('../lib/sim/cli.js');
      return simMain(rest);
    }
    default:
      process.stderr.write(command && command !== '--help' ? `unknown command "${command}"\n\n${USAGE}` : USAGE);
      return command && command !== '--help' ? 2 : 0;
  }
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
