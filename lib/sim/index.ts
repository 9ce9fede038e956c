/** The virtual-time simulator (issue 8, item 2). Entry points for the CLI: `simMain`, `runSim`, `parseSimArgs`. */
export { SIM_USAGE, SimUsageError, TARGETS, parseSimArgs, renderTable, runSim, settingsFor, simMain, type SimIo, type SimOptions, type SimReport, type TargetCheck } from './cli.js';
export { costPerMillionJobs, type CostPerMillion, type Usage } from './cost.js';
export { DEFAULT_SIM_SETTINGS, DEFAULT_TIMING, simulate, type SimProgress, type SimSettings, type StrategyResult, type Timing } from './engine.js';
export { PRICES, PRICES_CHECKED, PRICES_REGION, type Price } from './prices.js';
export { quotaBoundMs, SCENARIO_IDS, SCENARIOS, type Scenario, type ScenarioId } from './scenarios.js';
export { STRATEGIES, STRATEGY_IDS, type Strategy, type StrategyId } from './strategies.js';
