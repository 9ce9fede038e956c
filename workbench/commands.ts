/**
 * Every command of `ratelane`: the workbench's (`local`, `consume`, `soak`, `bench`, `sim`, `eval`: they run
 * the local stack, one consumer of it, or the simulator) beside the product's (`lib/cli`: `submit`, `resume`, `batch`, `review`, `residency`). Each
 * module is imported only when its command runs, so `ratelane sim` never loads the AWS SDK.
 */
import { PRODUCT_COMMANDS, type Command, type CommandRegistry, type HelpHint } from '../lib/cli/index.js';

/** Every command, in the order the usage lists them. */
export const COMMANDS: CommandRegistry = {
  local: {
    summary: 'run the pipeline on the local stack and print a scorecard',
    load: async () => (await import('./drivers/run/command.js')).localCommand as Command<unknown>,
  },
  consume: {
    summary: 'one long-lived consumer process of a lane against given endpoints, until SIGTERM',
    load: async () => (await import('./drivers/consume/command.js')).consumeCommand as Command<unknown>,
  },
  submit: PRODUCT_COMMANDS.submit!,
  resume: PRODUCT_COMMANDS.resume!,
  soak: {
    summary: 'many jobs with random faults, then a reconciliation',
    load: async () => (await import('./drivers/soak/command.js')).soakCommand as Command<unknown>,
  },
  bench: {
    summary: 'strategies side by side on the local stack, and overhead',
    load: async () => (await import('./drivers/bench/command.js')).benchCommand as Command<unknown>,
  },
  sim: {
    summary: 'virtual-time simulator: strategies at scale, no emulators',
    load: async () => (await import('./sim/command.js')).simCommand as Command<unknown>,
  },
  eval: {
    summary: 'release scorecard: per-field accuracy beside operations, with a gate',
    load: async () => (await import('./drivers/eval/command.js')).evalCommand as Command<unknown>,
  },
  batch: PRODUCT_COMMANDS.batch!,
  review: PRODUCT_COMMANDS.review!,
  residency: PRODUCT_COMMANDS.residency!,
  erase: PRODUCT_COMMANDS.erase!,
  cancel: PRODUCT_COMMANDS.cancel!,
  jobs: PRODUCT_COMMANDS.jobs!,
  redrive: PRODUCT_COMMANDS.redrive!,
};

/** In the repository every command runs through npm: `npm run submit -- --help`. */
export const NPM_HELP: HelpHint = (name) => `npm run ${name} -- --help`;
