import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.ts';

describe('canonicalJson', () => {
  it('sorts keys recursively and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('orders keys by UTF-16 code units and escapes strings as JSON does (RFC 8785)', () => {
    expect(canonicalJson({ é: 1, Z: 2, a: 'line\nbreak "quoted"' })).toBe(
      '{"Z":2,"a":"line\\nbreak \\"quoted\\"","é":1}',
    );
    expect(canonicalJson([1, undefined, 2.5e-7])).toBe('[1,null,2.5e-7]');
  });

  it('rejects values JSON cannot hold', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });
});
