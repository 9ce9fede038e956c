#!/usr/bin/env node
/**
 * The installed package's command line, `ratelane <command>`: the product's commands only (`submit`,
 * `resume`, `batch`), against a lane in AWS or given endpoints. The repository's own `bin/ratelane.ts`
 * adds the workbench's (the local stack, the simulator, the benchmarks).
 */
import { PRODUCT_COMMANDS, runCli } from './index.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

runCli(PRODUCT_COMMANDS, process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const e = error as Error;
    process.stderr.write(`ratelane: ${e.name ?? 'Error'}: ${e.message ?? String(error)}\n`);
    process.exit(1);
  },
);
