import { describe, expect, it } from 'vitest';
import { createPermissionPolicy, parsePermissionMode } from '../../src/permissions/index.js';

describe('parsing a permission mode', () => {
  it.each([
    ['interactive', 'interactive'],
    ['auto', 'auto'],
    ['read-only', 'read-only'],
    [' Auto\n', 'auto'],
    ['READ-ONLY', 'read-only'],
  ])('%j is %j', (text, mode) => {
    expect(parsePermissionMode(text)).toBe(mode);
  });

  it.each(['readonly', 'read_only', 'yolo', '', 'auto mode', 'interactive,auto'])(
    '%j is refused, naming the modes that exist',
    (text) => {
      expect(() => parsePermissionMode(text)).toThrow(
        `unknown permission mode ${JSON.stringify(text)}: expected one of interactive, auto, read-only`,
      );
    },
  );

  it.each([undefined, null, 1, {}])('a non-string (%j) is refused too', (value) => {
    expect(() => parsePermissionMode(value)).toThrow(/permission mode must be text/);
  });

  it('a policy built from an unchecked config value refuses an unknown mode', () => {
    expect(() => createPermissionPolicy({ mode: 'yolo' as never })).toThrow(/unknown permission mode "yolo"/);
  });
});
