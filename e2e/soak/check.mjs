// The soak's verdict, as a pure function of what was read from the browser:
// the journal's raw rows (store, position, json) and the workspace file's
// text. Kept free of Playwright so `node soak/run.mjs --self-test` can prove
// on doctored inputs that each violation is caught (a checker that cannot
// fail proves nothing).

/** Outcomes after which nothing more happens to a command, or whose
 * uncertainty is itself the honest final answer. `not_dispatched` is proven
 * never exposed, so it is settled too. */
export const SETTLED = new Set([
  'completed', 'failed', 'cancelled', 'timed_out', 'may_have_started', 'lost', 'not_dispatched',
]);
export const UNCERTAIN = new Set(['may_have_started', 'lost']);

/** The command line a soak prompt uses for cycle `cycle`, step `step`: it
 * appends its own numbered line and then sleeps, so an interruption can land
 * before, during or after the write. */
export function soakLine(cycle, step) {
  return `echo ${cycle}-${step} >> soak.txt; sleep 1`;
}

const LINE = /^echo (\d+)-(\d+) >> soak\.txt; sleep 1$/;

/**
 * @param {{ rows: {store: string, position: unknown, json: unknown}[],
 *           quarantined: number, file: string,
 *           faults?: Map<number, string> }} input
 *   `faults` maps a cycle number to the fault kind that interrupted it.
 * @returns {{ violations: string[], commands: object[], byFault: Map<string, object>, entries: number }}
 */
export function check({ rows, quarantined, file, faults = new Map() }) {
  const violations = [];

  // (b) every record readable, positions dense from 1.
  const entries = [];
  for (const row of rows) {
    let entry;
    try {
      entry = JSON.parse(row.json);
    } catch {
      violations.push(`unreadable record in ${row.store} at position ${row.position}: not JSON`);
      continue;
    }
    if (entry?.v !== 1 || typeof entry.record?.type !== 'string' || !Number.isInteger(entry.position)) {
      violations.push(`unreadable record in ${row.store} at position ${row.position}: not a v1 journal entry`);
      continue;
    }
    if (entry.position !== row.position) {
      violations.push(`record in ${row.store} stored under position ${row.position} says ${entry.position}`);
    }
    entries.push(entry);
  }
  if (quarantined > 0) violations.push(`${quarantined} record(s) in quarantine: the app could not read them`);
  entries.sort((a, b) => a.position - b.position);
  for (let i = 0; i < entries.length; i += 1) {
    const expected = i === 0 ? 1 : entries[i - 1].position + 1;
    if (entries[i].position !== expected) {
      violations.push(
        entries[i].position < expected
          ? `position ${entries[i].position} is used twice`
          : `positions ${expected}..${entries[i].position - 1} are missing`,
      );
    }
  }

  // Each command's story from the journal.
  const commands = new Map();
  for (const { record, position } of entries) {
    if (record.type === 'command_admitted') {
      const line = record.binding?.command_line ?? '';
      commands.set(record.command, { id: record.command, line, position, outcome: 'admitted', exposed: false });
    }
  }
  for (const { record } of entries) {
    const command = commands.get(record.command);
    if (!command) continue;
    if (record.type === 'dispatch_exposed') command.exposed = true;
    // Entries are in position order, so the last change is the outcome now.
    if (record.type === 'outcome_changed') command.outcome = record.to;
  }

  // (c) every command settled.
  for (const command of commands.values()) {
    if (!SETTLED.has(command.outcome)) {
      violations.push(`command ${command.id} (${command.line}) left ${command.outcome}`);
    }
  }

  // (a) no command ran twice; a line only for a command that may have run.
  const byLine = new Map();
  for (const command of commands.values()) {
    const m = LINE.exec(command.line);
    if (m) byLine.set(`${m[1]}-${m[2]}`, command);
  }
  const seen = new Map();
  for (const text of file.split('\n')) {
    if (text === '') continue;
    seen.set(text, (seen.get(text) ?? 0) + 1);
  }
  for (const [text, n] of seen) {
    const command = byLine.get(text);
    if (n > 1) violations.push(`line ${JSON.stringify(text)} appears ${n} times: a command ran more than once`);
    if (!command) {
      violations.push(`line ${JSON.stringify(text)} has no admitted command in the journal`);
    } else if (command.outcome === 'not_dispatched' && !command.exposed) {
      violations.push(`line ${text} was written by command ${command.id}, which the journal says was never dispatched`);
    } else {
      command.lines = n;
    }
  }
  for (const [text, command] of byLine) {
    // A completed `echo …; sleep 1` has written its line; missing means the
    // write or the outcome is false.
    if (command.outcome === 'completed' && !seen.has(text)) {
      violations.push(`command ${command.id} (${command.line}) is completed but its line is missing`);
    }
  }

  // The figures, per fault kind.
  const byFault = new Map();
  const row = (kind) => {
    if (!byFault.has(kind)) {
      byFault.set(kind, { cycles: 0, commands: 0, completed: 0, uncertain: 0, other: 0, lines: 0, duplicates: 0 });
    }
    return byFault.get(kind);
  };
  for (const kind of faults.values()) row(kind).cycles += 1;
  for (const [text, command] of byLine) {
    const kind = faults.get(Number(text.split('-')[0])) ?? 'none';
    const r = row(kind);
    r.commands += 1;
    if (command.outcome === 'completed') r.completed += 1;
    else if (UNCERTAIN.has(command.outcome)) r.uncertain += 1;
    else r.other += 1;
    const n = seen.get(text) ?? 0;
    r.lines += Math.min(n, 1);
    r.duplicates += Math.max(n - 1, 0);
  }
  return { violations, commands: [...commands.values()], byFault, entries: entries.length };
}

/** Doctored inputs, each of which the checker must reject, and one clean
 * input it must accept. Returns the failures of the checker itself. */
export function selfTest() {
  const entry = (position, record, store = 'records') => ({
    store,
    position,
    json: JSON.stringify({ v: 1, position, at: position, record }),
  });
  const admitted = (position, id, cycle, step) =>
    entry(position, { type: 'command_admitted', command: id, binding: { command_line: soakLine(cycle, step) } }, 'commands');
  const changed = (position, id, from, to) => entry(position, { type: 'outcome_changed', command: id, from, to });
  const exposed = (position, id) => entry(position, { type: 'dispatch_exposed', command: id });
  const clean = () => [
    admitted(1, 'A', 1, 1),
    exposed(2, 'A'),
    changed(3, 'A', 'admitted', 'dispatched'),
    changed(4, 'A', 'dispatched', 'completed'),
    admitted(5, 'B', 1, 2),
    exposed(6, 'B'),
    changed(7, 'B', 'admitted', 'may_have_started'),
    admitted(8, 'C', 1, 3),
    changed(9, 'C', 'admitted', 'not_dispatched'),
  ];
  const base = { quarantined: 0, file: '1-1\n1-2\n', faults: new Map([[1, 'reload']]) };
  const cases = [
    ['clean', { ...base, rows: clean() }, null],
    ['duplicate line', { ...base, rows: clean(), file: '1-1\n1-2\n1-1\n' }, /appears 2 times/],
    ['line of an unknown command', { ...base, rows: clean(), file: '1-1\n7-1\n' }, /no admitted command/],
    ['line of a never-dispatched command', { ...base, rows: clean(), file: '1-1\n1-3\n' }, /never dispatched/],
    ['completed line missing', { ...base, rows: clean(), file: '1-2\n' }, /completed but its line is missing/],
    ['hole in positions', { ...base, rows: clean().filter((r) => r.position !== 6) }, /positions 6\.\.6 are missing/],
    ['position twice', { ...base, rows: [...clean(), { ...clean()[8], store: 'events' }] }, /used twice/],
    ['unreadable record', { ...base, rows: [...clean(), { store: 'records', position: 10, json: '{"v":1,' }] }, /unreadable/],
    ['quarantined record', { ...base, rows: clean(), quarantined: 1 }, /quarantine/],
    ['command left running', { ...base, rows: [...clean(), changed(10, 'A', 'admitted', 'running')] }, /left running/],
    ['command left admitted', { ...base, rows: [...clean(), admitted(10, 'D', 2, 1)] }, /left admitted/],
  ];
  const failures = [];
  for (const [name, input, expected] of cases) {
    const { violations } = check(input);
    if (expected === null && violations.length > 0) failures.push(`${name}: unexpected ${violations.join('; ')}`);
    if (expected !== null && !violations.some((v) => expected.test(v))) {
      failures.push(`${name}: not caught (got ${JSON.stringify(violations)})`);
    }
  }
  const figures = check(cases[0][1]).byFault.get('reload');
  if (figures?.commands !== 3 || figures.completed !== 1 || figures.uncertain !== 1 || figures.lines !== 2) {
    failures.push(`clean: wrong figures ${JSON.stringify(figures)}`);
  }
  return failures;
}
