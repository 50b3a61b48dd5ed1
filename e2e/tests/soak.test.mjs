// The crash soak, short: five cycles with a fixed seed, so each of the five
// fault kinds (reload, renderer crash, runtime closed, controller closed,
// browser closed and reopened) interrupts the numbered commands once; then
// the journal and the workspace are checked. `cargo xtask soak` runs the long
// version (docs/soak.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check, selfTest, soakLine } from '../soak/check.mjs';
import { FAULTS, runSoak, schedule, table } from '../soak/soak.mjs';

const SEED = 12;

test('the soak checker rejects a doctored journal and workspace file', () => {
  assert.deepEqual(selfTest(), []);
  // The duplicate the soak exists to catch, spelled out here as well.
  const rows = [
    { store: 'commands', position: 1, json: JSON.stringify({ v: 1, position: 1, record: { type: 'command_admitted', command: 'A', binding: { command_line: soakLine(1, 1) } } }) },
    { store: 'records', position: 2, json: JSON.stringify({ v: 1, position: 2, record: { type: 'outcome_changed', command: 'A', from: 'running', to: 'completed' } }) },
  ];
  assert.deepEqual(check({ rows, quarantined: 0, file: '1-1\n' }).violations, []);
  assert.match(check({ rows, quarantined: 0, file: '1-1\n1-1\n' }).violations.join('\n'), /appears 2 times/);
});

test('five interrupted cycles, one per fault kind: nothing ran twice, the journal is whole, every command settled', async () => {
  assert.deepEqual(
    schedule(SEED, 5).map((p) => p.fault).sort(),
    [...FAULTS].sort(),
    'the seed covers every fault kind once',
  );
  const result = await runSoak({ seed: SEED, cycles: 5, log: (line) => console.log(`  ${line}`) });
  console.log(table(result.byFault, result.recovery));
  console.log(`  marked done ${result.marks.done}, not done ${result.marks.notDone}; Resume clicked ${result.resumed}×; ${(result.durationMs / 1000).toFixed(0)} s`);
  assert.deepEqual(result.findings, []);
  assert.deepEqual(result.violations, []);
  const all = [...result.byFault.values()];
  assert.ok(all.reduce((n, r) => n + r.commands, 0) > 0, 'some commands were admitted');
  assert.equal(all.reduce((n, r) => n + r.duplicates, 0), 0);
});
