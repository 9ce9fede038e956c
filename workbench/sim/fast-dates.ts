/**
 * Faster `Date.prototype.toISOString` and `Date.parse` for the simulator's hot loop. The policy
 * (lib/policy) carries instants as ISO-8601 strings (`eligibleAt`, cooldown `until`), so a deferral
 * formats two of them and the next receive parses one: at 20 million deferrals V8's own
 * implementations were half of the run's time. While a simulation runs, {@link withFastDates}
 * replaces both with exact equivalents for UTC instants in years 1970..9999 (the only ones the
 * simulator produces), falling back to the originals for anything else, and restores them after.
 * The policy code itself is not touched.
 */

const MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const DAY_MS = 86_400_000;

let cachedDay = NaN;
/** Character codes of the ISO text being built; `YYYY-MM-DDT` of `cachedDay` stays in place. */
const CODES: number[] = Array.from('1970-01-01T00:00:00.000Z', (c) => c.charCodeAt(0));

/** Days since 1970-01-01 → the `YYYY-MM-DD` codes (Howard Hinnant's civil_from_days). */
function setDay(days: number): void {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  put(0, y, 4);
  put(5, m, 2);
  put(8, d, 2);
}

function put(at: number, value: number, width: number): void {
  for (let i = at + width - 1; i >= at; i--) {
    CODES[i] = 48 + (value % 10);
    value = Math.floor(value / 10);
  }
}

/**
 * `new Date(ms).toISOString()` for `ms` in [0, 9999-12-31]. Built from character codes so the
 * result is one flat string (a template literal would leave a rope per string, and a million ropes
 * held in job state cost more in GC than the formatting saves).
 */
export function fastIso(ms: number): string {
  const t = Math.floor(ms);
  const day = Math.floor(t / DAY_MS);
  if (day !== cachedDay) {
    cachedDay = day;
    setDay(day);
  }
  let rem = t - day * DAY_MS;
  const h = Math.floor(rem / 3_600_000);
  rem -= h * 3_600_000;
  const m = Math.floor(rem / 60_000);
  rem -= m * 60_000;
  const s = Math.floor(rem / 1000);
  put(11, h, 2);
  put(14, m, 2);
  put(17, s, 2);
  put(20, rem - s * 1000, 3);
  return String.fromCharCode.apply(null, CODES);
}

/** Days since 1970-01-01 of a civil date (days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function digits(s: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** `Date.parse` of exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`; `undefined` for any other text. */
export function fastParseIso(s: string): number | undefined {
  if (s.length !== 24 || s.charCodeAt(23) !== 90 /* Z */ || s[4] !== '-' || s[7] !== '-' || s[10] !== 'T' || s[13] !== ':' || s[16] !== ':' || s[19] !== '.')
    return undefined;
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  const h = digits(s, 11, 2);
  const mi = digits(s, 14, 2);
  const se = digits(s, 17, 2);
  const ms = digits(s, 20, 3);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 28 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59 || ms < 0) return undefined;
  return daysFromCivil(y, mo, d) * DAY_MS + h * 3_600_000 + mi * 60_000 + se * 1000 + ms;
}

/** Runs `fn` with the fast `toISOString` / `Date.parse` installed, restoring the originals after. */
export function withFastDates<T>(fn: () => T): T {
  const originalIso = Date.prototype.toISOString;
  const originalParse = Date.parse;
  Date.prototype.toISOString = function toISOString(this: Date): string {
    const t = this.getTime();
    return t >= 0 && t <= MAX_MS ? fastIso(t) : originalIso.call(this);
  };
  Date.parse = function parse(text: string): number {
    return (typeof text === 'string' ? fastParseIso(text) : undefined) ?? originalParse(text);
  };
  try {
    return fn();
  } finally {
    Date.prototype.toISOString = originalIso;
    Date.parse = originalParse;
  }
}
