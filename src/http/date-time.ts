/**
 * The date-times the service accepts (format `date-time` in every schema it validates with):
 * RFC 3339 §5.6 (with `t`, `z` or a space, as its notes allow) naming an instant the service can store and give
 * back as RFC 3339, that is in the years 0000–9999 once in UTC, and not a leap second (`:60`), which no
 * store here can hold. What is stored is that instant in UTC, to the millisecond.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** `YYYY-MM-DDTHH:mm:ss.sssZ` for a date-time the service accepts; undefined for any other text. */
export function toUtcDateTime(text: string): string | undefined {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [fraction = '', sign, offsetHours = '0', offsetMinutes = '0'] = match.slice(7);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || Number(offsetHours) > 23 || Number(offsetMinutes) > 59)
    return undefined;
  const local = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0–99 as 1900–1999.
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3).padEnd(3, '0')));
  const offsetMs = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  const utc = new Date(local.getTime() - offsetMs);
  const utcYear = utc.getUTCFullYear();
  return utcYear >= 0 && utcYear <= 9999 ? utc.toISOString() : undefined;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
