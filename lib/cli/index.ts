/**
 * The product's commands — those an operator or a service team runs against a lane in AWS (or the
 * local stack): `submit`, `resume`, `batch` — each with its summary and a loader that imports its
 * module only when it runs. The workbench adds its own (`workbench/commands.ts`); `bin/ratelane.ts`
 * runs either.
 */
import { type Command, type CommandIo, runCommand } from './command.js';

export type { Command } from './command.js';

/** One command of a registry. */
export interface CommandEntry {
  /** One line for the top-level usage. */
  summary: string;
  /** Imports the command's module and returns the command. */
  load(): Promise<Command<unknown>>;
}

/** A registry: command name to entry, in the order the usage lists them. */
export type CommandRegistry = Readonly<Record<string, CommandEntry>>;

/** The product's commands. */
export const PRODUCT_COMMANDS: CommandRegistry = {
  submit: { summary: "submit documents to a region lane's queue", load: async () => (await import('./submit.js')).submitCommand as Command<unknown> },
  resume: {
    summary: 'resume a paused lane (after a billing pause, or early)',
    load: async () => (await import('./resume.js')).resumeCommand as Command<unknown>,
  },
  batch: {
    summary: 'batch lane: submit, status, redrive, cancel a batch',
    load: async () => (await import('./batch.js')).batchCommand as Command<unknown>,
  },
  review: {
    summary: 'jobs in needs_review: list them, commit a corrected object',
    load: async () => (await import('./review.js')).reviewCommand as Command<unknown>,
  },
  residency: {
    summary: "where a lane's job data goes, from the synthesized stacks",
    load: async () => (await import('./residency.js')).residencyCommand as Command<unknown>,
  },
  erase: {
    summary: 'erase a source in one lane: its results, ledger, documents',
    load: async () => (await import('./erase.js')).eraseCommand as Command<unknown>,
  },
  cancel: {
    summary: 'cancel a job that is not committed: no further call, never committed',
    load: async () => (await import('./cancel.js')).cancelCommand as Command<unknown>,
  },
  jobs: {
    summary: "look a job up (its whole story), list a lane's jobs in one state",
    load: async () => (await import('./jobs.js')).jobsCommand as Command<unknown>,
  },
  redrive: {
    summary: "a lane's dead-letter queue by reason, moved back (never a settled job)",
    load: async () => (await import('./redrive.js')).redriveCommand as Command<unknown>,
  },
};

/** How a command's own help is shown: `ratelane submit --help` (the installed CLI) unless a registry runs otherwise. */
export type HelpHint = (name: string) => string;

const installedHelp: HelpHint = (name) => `ratelane ${name} --help`;

/** The top-level usage of a registry: every command with its summary and where its own help is. */
export function usageOf(commands: CommandRegistry, helpHint: HelpHint = installedHelp): string {
  return `Usage: ratelane <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, entry]) => `  ${name.padEnd(8)}  ${entry.summary.padEnd(60)}  (${helpHint(name)})`)
  .join('\n')}
`;
}

/** The registry entry of a command name, if there is one. */
export function findCommand(commands: CommandRegistry, name: string | undefined): CommandEntry | undefined {
  return name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined;
}

/** Runs the command `argv` names from `commands` (or prints the usage); resolves the exit code (2: no such command). */
export async function runCli(commands: CommandRegistry, argv: readonly string[], io: CommandIo, helpHint?: HelpHint): Promise<number> {
  const [name, ...rest] = argv;
  const entry = findCommand(commands, name);
  if (!entry) {
    const unknown = name !== undefined && name !== '--help';
    (unknown ? io.stderr : io.stdout).write(`${unknown ? `unknown command "${name}"\n\n` : ''}${usageOf(commands, helpHint)}`);
    return unknown ? 2 : 0;
  }
  return runCommand(await entry.load(), rest, io);
}
