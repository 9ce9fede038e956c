/**
 * The one shape of a ratelane command: a usage text, a pure `parse` of its flags, and a `run` that
 * writes to one {@link CommandIo} and resolves an exit code. {@link runCommand} ties them together the
 * same way for every command: `--help` prints the usage and exits 0; a {@link UsageError} prints the
 * message and the usage and exits 2.
 */
import { LaneConfigError } from '../config/errors.js';
import { RatelaneError } from '../platform/errors.js';

/** Something a command writes text to (a stream, or a test's collector). */
export interface OutputStream {
  write(chunk: string): unknown;
}

/** Where a command writes, and the environment it reads. */
export interface CommandIo {
  /** Results: tables, scorecards, reports, JSON lines. */
  stdout: OutputStream;
  /** Progress and errors. */
  stderr: OutputStream;
  /** Environment variables (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Bad command-line usage; the message is meant for the user. `--help` is a usage "error" too, with
 * an empty message and `help` set: the usage is printed and the command exits 0.
 */
export class UsageError extends RatelaneError {
  override name = 'UsageError';
  readonly kind = 'input' as const;
  readonly retryable = false;
  /** True when `--help` asked for the usage (exit 0), false for a real usage error (exit 2). */
  readonly help: boolean;

  constructor(message: string, options?: { cause?: unknown; help?: boolean }) {
    super(message, options);
    this.help = options?.help ?? false;
  }

  /** The "error" `--help` raises: print the usage, exit 0. */
  static help(): UsageError {
    return new UsageError('', { help: true });
  }
}

/** One command of the `ratelane` CLI. */
export interface Command<O> {
  /** The command's name (`ratelane <name>`, `npm run <name>`). */
  readonly name: string;
  /** The usage text, ending in a newline. */
  readonly usage: string;
  /** Where `--help` prints the usage. */
  readonly helpTo: 'stdout' | 'stderr';
  /**
   * With `--json` on the command line, a usage error is one JSON object on stdout
   * (`{"ok":false,"error":{"kind":"usage","message":…}}`) instead of text and the usage on stderr.
   */
  readonly jsonUsageErrors?: boolean;
  /** Reads the flags (pure: no I/O). @throws {UsageError} for bad flags and for `--help` */
  parse(argv: readonly string[]): O;
  /** Runs with parsed options; resolves the exit code. May throw {@link UsageError} for input it only sees then. */
  run(options: O, io: CommandIo): Promise<number>;
}

/** Exit code of a usage error. */
const USAGE_EXIT_CODE = 2;

/**
 * Parses and runs a command. `--help` prints the usage (on the command's `helpTo` stream) and
 * resolves 0; a {@link UsageError} from `parse` or `run` prints `error: <message>`, a blank line and
 * the usage on stderr (or one JSON object, see {@link Command.jsonUsageErrors}) and resolves 2; so does a
 * {@link LaneConfigError} (a wrong lane config file), with its message and no usage. Any
 * other error is thrown.
 */
export async function runCommand<O>(command: Command<O>, argv: readonly string[], io: CommandIo): Promise<number> {
  try {
    return await command.run(command.parse(argv), io);
  } catch (error) {
    if (error instanceof LaneConfigError) {
      // The lane config (its file, the environment) is wrong: what to fix, without the usage.
      if (command.jsonUsageErrors && argv.includes('--json'))
        io.stdout.write(`${JSON.stringify({ ok: false, error: { kind: 'config', message: error.message } })}\n`);
      else io.stderr.write(`error: ${error.message}\n`);
      return USAGE_EXIT_CODE;
    }
    if (!(error instanceof UsageError)) throw error;
    if (error.help) {
      io[command.helpTo].write(command.usage);
      return 0;
    }
    if (command.jsonUsageErrors && argv.includes('--json')) {
      io.stdout.write(`${JSON.stringify({ ok: false, error: { kind: 'usage', message: error.message } })}\n`);
    } else {
      io.stderr.write(`error: ${error.message}\n\n${command.usage}`);
    }
    return USAGE_EXIT_CODE;
  }
}

/** What an operator's command prints, and its exit code. */
export interface CommandOutcome {
  code: number;
  /** Printed as one object with `--json`. */
  json: Record<string, unknown>;
  /** Printed otherwise: on stdout when `code` is 0, else on stderr. */
  text: string;
}

/**
 * Runs `act` and writes its outcome (one JSON object on stdout with `json`; else its text, on stderr unless
 * its code is 0); anything `act` throws becomes `failureOf`'s outcome, but bad usage and a wrong lane config,
 * which {@link runCommand} reports (exit 2). Returns the exit code.
 */
export async function writeOutcome(
  json: boolean,
  io: CommandIo,
  act: () => Promise<CommandOutcome>,
  failureOf: (error: unknown) => CommandOutcome,
): Promise<number> {
  let outcome: CommandOutcome;
  try {
    outcome = await act();
  } catch (error) {
    if (error instanceof UsageError || error instanceof LaneConfigError) throw error;
    outcome = failureOf(error);
  }
  if (json) io.stdout.write(`${JSON.stringify(outcome.json)}\n`);
  else (outcome.code === 0 ? io.stdout : io.stderr).write(outcome.text);
  return outcome.code;
}
