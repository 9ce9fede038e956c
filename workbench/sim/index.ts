/** The virtual-time simulator (README.md, "Benchmark results"). Its command is workbench/sim/command.ts; `runSim` is the driver. */
export { TARGETS, renderTable, runSim, settingsFor, type SimIo, type SimOptions, type SimReport, type TargetCheck } from './driver.js';
export { costPerMillionJobs, type CostPerMillion, type Usage } from './cost.js';
export { DEFAULT_SIM_SETTINGS, DEFAULT_TIMING, simulate, type SimProgress, type SimSettings, type StrategyResult, type Timing } from './engine.js';
export { PRICES, PRICES_CHECKED, PRICES_REGION, type Price } from '../../lib/platform/aws-prices.js';
export { quotaBoundMs, SCENARIO_IDS, SCENARIOS, type Scenario, type ScenarioId } from './scenarios.js';
export { SimKeyPool, SimRateState, simKeys, type AdmissionCounters } from './sim-key-pool.js';
export { STRATEGIES, STRATEGY_IDS, type Strategy, type StrategyId } from './strategies.js';
