import { readFileSync } from 'node:fs';
const t = JSON.parse(readFileSync('/tmp/rep/trace-visit.json', 'utf8'));
const events = t.traceEvents ?? t;
const names = new Map();
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
const T0 = Math.min(...events.filter(e=>e.ts>0).map(e => e.ts));
const [FROM, TO] = (process.env.WIN ?? '0,100000').split(',').map(Number);
const profiles = new Map();
for (const e of events) {
  if (e.name === 'Profile') profiles.set(`${e.pid}:${e.id}`, { thread: `${e.pid}:${e.tid}`, start: e.args.data.startTime, nodes: new Map(), samples: [], deltas: [] });
  if (e.name === 'ProfileChunk') { const p = profiles.get(`${e.pid}:${e.id}`); if (!p) continue; const d = e.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) p.nodes.set(n.id, n); p.samples.push(...(d.cpuProfile?.samples ?? [])); p.deltas.push(...(d.timeDeltas ?? [])); }
}
for (const [id, p] of profiles) {
  if (!(names.get(p.thread) ?? '').startsWith(process.env.THREAD ?? 'CrRendererMain')) continue;
  const incl = new Map(); let ts = p.start; let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    ts += p.deltas[i] ?? 0; const at = (ts - T0) / 1000; if (at < FROM || at > TO) continue;
    let n = p.nodes.get(p.samples[i]); if (n?.callFrame.functionName === '(idle)') continue;
    const dt = (p.deltas[i + 1] ?? 0) / 1000; total += dt;
    const seen = new Set();
    while (n) { const f = n.callFrame.functionName; if (!seen.has(f)) { seen.add(f); incl.set(f, (incl.get(f) ?? 0) + dt); } n = n.parent !== undefined ? p.nodes.get(n.parent) : [...p.nodes.values()].find(m => m.children?.includes(n.id)); }
  }
  console.log('total', total.toFixed(0));
  const re = new RegExp(process.env.GREP ?? 'lifeline_web');
  [...incl].filter(([f]) => re.test(f)).sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 40)).forEach(([f, v]) => console.log(v.toFixed(1).padStart(7), f.slice(0, 140)));
}
