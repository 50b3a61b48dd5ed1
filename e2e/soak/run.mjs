// `cargo xtask soak` runs this: node soak/run.mjs [--cycles N] [--seed N]
// [--self-test]. Prints the seed first so a run can be repeated, one line per
// cycle, the table per fault kind, and every finding; exits 1 on any
// violation or finding.
import { selfTest } from './check.mjs';
import { runSoak, table } from './soak.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : undefined;
};

const failures = selfTest();
if (failures.length > 0) {
  console.error(`soak: the checker's self-test failed:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
if (args.includes('--self-test')) {
  console.log('soak: checker self-test passed (every doctored journal and file was rejected, the clean one accepted)');
  process.exit(0);
}

const cycles = option('--cycles') ?? 50;
const seed = option('--seed') ?? Math.floor(Math.random() * 2 ** 31);
console.log(`soak: ${cycles} cycles, seed ${seed} (repeat with --seed ${seed})`);
const result = await runSoak({ seed, cycles });
console.log(`\n${table(result.byFault, result.recovery)}\n`);
const outcomes = {};
for (const c of result.commands) outcomes[c.outcome] = (outcomes[c.outcome] ?? 0) + 1;
console.log(`soak: outcomes ${JSON.stringify(outcomes)}; uncertain marked done ${result.marks.done}, not done ${result.marks.notDone}`);
console.log(
  `soak: ${result.cycles} cycles in ${(result.durationMs / 1000).toFixed(0)} s; ` +
    `${result.entries} journal entries; Resume clicked ${result.resumed} times; seed ${seed}`,
);
for (const finding of result.findings) console.log(`finding: ${finding}`);
for (const violation of result.violations) console.log(`violation: ${violation}`);
if (result.violations.length + result.findings.length > 0) {
  console.error(`soak: ${result.violations.length} violation(s), ${result.findings.length} finding(s)`);
  process.exit(1);
}
console.log('soak: no command ran twice, the journal is dense and readable, every command settled');
