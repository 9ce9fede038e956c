/**
 * OpenAI's duration notation, as seen in `x-ratelimit-reset-*` headers (`12ms`, `6m0s`) and in
 * 429 messages ("Please try again in 9.816s", "in 1m26.4s"). It is Go's `time.Duration` text,
 * cut to millisecond precision.
 */

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60 * MS_PER_SECOND;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;

/**
 * Formats a wait in milliseconds the way OpenAI does: `0s`, `20ms`, `1s`, `1.2s`, `6m0s`,
 * `1m30.5s`, `2h0m0s`. Fractions of a millisecond round up (a wait is never understated).
 */
export function formatOpenAiDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < MS_PER_SECOND) return `${total}ms`;
  const hours = Math.floor(total / MS_PER_HOUR);
  const minutes = Math.floor((total % MS_PER_HOUR) / MS_PER_MINUTE);
  const secondsMs = total % MS_PER_MINUTE;
  const seconds = `${Math.floor(secondsMs / MS_PER_SECOND)}${fraction(secondsMs % MS_PER_SECOND)}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

function fraction(ms: number): string {
  if (ms === 0) return '';
  return `.${String(ms).padStart(3, '0').replace(/0+$/, '')}`;
}
