/**
 * The registry of ratelane's commands: each one's name and summary, and a loader that imports its
 * module only when it runs (so `ratelane sim` never loads the AWS SDK).
 */
import type { Command } from './command.js';

export { runCommand, UsageError, USAGE_EXIT_CODE, type Command, type CommandIo, type OutputStream } from './command.js';

/** One command of the registry. */
export interface CommandEntry {
  /** One line for the top-level usage. */
  summary: string;
  /** Imports the command's module and returns the command. */
  load(): Promise<Command<unknown>>;
}

/** Every command, in the order the usage lists them. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  local: {
    summary: 'run the pipeline on the local stack and print a scorecard',
    load: async () => (await import('./local.js')).localCommand as Command<unknown>,
  },
  submit: { summary: "submit documents to a region lane's queue", load: async () => (await import('./submit.js')).submitCommand as Command<unknown> },
  resume: {
    summary: 'resume a paused lane (after a billing pause, or early)',
    load: async () => (await import('./resume.js')).resumeCommand as Command<unknown>,
  },
  soak: { summary: 'many jobs with random faults, then a reconciliation', load: async () => (await import('./soak.js')).soakCommand as Command<unknown> },
  bench: {
    summary: 'strategies side by side on the local stack, and overhead',
    load: async () => (await import('./bench.js')).benchCommand as Command<unknown>,
  },
  sim: { summary: 'virtual-time simulator: strategies at scale, no emulators', load: async () => (await import('./sim.js')).simCommand as Command<unknown> },
  eval: {
    summary: 'release scorecard: per-field accuracy beside operations, with a gate',
    load: async () => (await import('./eval.js')).evalCommand as Command<unknown>,
  },
  batch: {
    summary: 'batch lane: submit, status, redrive, cancel a batch',
    load: async () => (await import('./batch.js')).batchCommand as Command<unknown>,
  },
};

/** The top-level usage: every command with its summary and where its own help is. */
export const USAGE = `Usage: ratelane <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, entry]) => `  ${name.padEnd(8)}  ${entry.summary.padEnd(60)}  (npm run ${name} -- --help)`)
  .join('\n')}
`;

/** The registry entry of a command name, if there is one. */
export function findCommand(name: string | undefined): CommandEntry | undefined {
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}
