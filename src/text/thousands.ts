// A whole number with its thousands grouped, as people read it in a message: 4,096.
//
// Not `toLocaleString('en-US')`: its first use in a process loads ICU's number formatting,
// about 7 MB of the node binary's data paged in and tens of milliseconds, and the start-up
// line (the sandbox's bounds) would pay that for every bot, idle or not. The words are the
// same as en-US's for a whole number.
export function thousands(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const whole = Math.round(value);
  const digits = String(Math.abs(whole));
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return whole < 0 ? `-${grouped}` : grouped;
}
