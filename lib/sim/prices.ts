/** The AWS prices the simulator's cost figures use: `lib/shared/aws-prices.ts` (the consumer's wait bound uses them too). */
export * from '../shared/aws-prices.js';
