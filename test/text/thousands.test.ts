import { describe, expect, it } from 'vitest';
import { thousands } from '../../src/text/thousands.js';

describe('thousands', () => {
  it("groups a whole number's thousands as en-US does", () => {
    for (const value of [0, 7, 999, 1000, 4096, 65534, 1_000_000, 123_456_789, -1234, -999, Number.MAX_SAFE_INTEGER]) {
      expect(thousands(value)).toBe(value.toLocaleString('en-US'));
    }
  });

  it('rounds a fraction to the whole number, and says what is not a number', () => {
    expect(thousands(1234.5)).toBe('1,235');
    expect(thousands(999.4)).toBe('999');
    expect(thousands(Number.NaN)).toBe('NaN');
    expect(thousands(Number.POSITIVE_INFINITY)).toBe('Infinity');
  });
});
