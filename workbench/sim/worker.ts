/**
 * Runs one simulation in a worker thread (the CLI runs two at a time on a 2-core machine).
 * Input (`workerData`): `{ scenario, strategy, settings }` ids and settings; posts
 * `{ type: 'progress', progress }` messages and one `{ type: 'result', result }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { simulate } from './engine.js';
import type { SimSettings } from './settings.js';
import { SCENARIOS, type ScenarioId } from './scenarios.js';
import { STRATEGIES, type StrategyId } from './strategies.js';

const data = workerData as { scenario: ScenarioId; strategy: StrategyId; settings: SimSettings };
const port = parentPort;
if (port) {
  try {
    const result = simulate(SCENARIOS[data.scenario], STRATEGIES[data.strategy], data.settings, {
      onProgress: (progress) => port.postMessage({ type: 'progress', progress }),
    });
    port.postMessage({ type: 'result', result });
  } catch (error) {
    port.postMessage({ type: 'error', message: (error as Error)?.stack ?? String(error) });
  }
}
