/**
 * The fleet file's YAML writer (ui/lib/fleet-yaml.ts, the CLI's dump and the console's
 * download): whatever JSON it is given, the `yaml` package reads back the same value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fleetOf } from '../../scripts/bench/fleet-file';
import { fleetToYaml, yamlOf } from '../../ui/lib/fleet-yaml';

const json = fc.jsonValue().filter((v) => !JSON.stringify(v).includes('__proto__'));

describe('the fleet file as YAML', () => {
  it('reads back as the value it was written from, for any JSON value', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(parse(yamlOf(value))).toEqual(value);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes strings that could be read otherwise quoted, plain ones plain', () => {
    const text = yamlOf({
      a: ['true', 'no', '1.5', '2030-01-01T00:00:00Z', 'env:KEY', 'a: b', '#x', ''],
    });
    expect(text).toBe(
      [
        'a:',
        '  - "true"',
        '  - "no"',
        '  - "1.5"',
        '  - "2030-01-01T00:00:00Z"',
        '  - env:KEY',
        '  - "a: b"',
        '  - "#x"',
        '  - ""',
      ].join('\n'),
    );
    const file = fleetOf(2, 'K');
    expect(parse(fleetToYaml(file))).toEqual(file);
    expect(fleetToYaml(file)).toContain('  - ref: partner-001\n    name: Partner 001\n');
  });
});
