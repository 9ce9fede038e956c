/**
 * The product's commands — those an operator or a service team runs against a lane in AWS (or the
 * local stack): `submit`, `resume`, `batch` — each with its summary and a loader that imports its
 * module only when it runs. The workbench adds its own (`workbench/commands.ts`); `bin/ratelane.ts`
 * runs either.
 */
import type { Command } from './command.js';

export { runCommand, type Command } from './command.js';

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
};

/** The top-level usage of a registry: every command with its summary and where its own help is. */
export function usageOf(commands: CommandRegistry): string {
  return `Usage: ratelane <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, entry]) => `  ${name.padEnd(8)}  ${entry.summary.padEnd(60)}  (npm run ${name} -- --help)`)
  .join('\n')}
`;
}

/** The registry entry of a command name, if there is one. */
export function findCommand(commands: CommandRegistry, name: string | undefined): CommandEntry | undefined {
  return name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined;
}
