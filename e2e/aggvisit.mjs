import { readFileSync } from 'node:fs';
const t = JSON.parse(readFileSync('/tmp/rep/trace-visit.json', 'utf8'));
const events = t.traceEvents ?? t;
const names = new Map();
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
// navigation start: first 'navigationStart' mark
const nav = events.find(e => e.name === 'navigationStart' && e.args?.data?.isLoadingMainFrame && e.args.data.documentLoaderURL?.startsWith('http'));
const T0 = nav ? nav.ts : Math.min(...events.filter(e=>e.ts>0).map(e => e.ts));
const BIN = Number(process.env.BIN ?? 20);
const profiles = new Map();
for (const e of events) {
  if (e.name === 'Profile') profiles.set(`${e.pid}:${e.id}`, { thread: `${e.pid}:${e.tid}`, start: e.args.data.startTime, nodes: new Map(), samples: [], deltas: [] });
  if (e.name === 'ProfileChunk') {
    const p = profiles.get(`${e.pid}:${e.id}`); if (!p) continue;
    const d = e.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) p.nodes.set(n.id, n);
    p.samples.push(...(d.cpuProfile?.samples ?? []));
    p.deltas.push(...(d.timeDeltas ?? []));
  }
}
for (const [id, p] of profiles) {
  let ts = p.start; const bins = []; const top = [];
  for (let i = 0; i < p.samples.length; i++) {
    ts += p.deltas[i] ?? 0;
    const n = p.nodes.get(p.samples[i]); const name = n?.callFrame.functionName;
    if (name === '(idle)') continue;
    const dt = (p.deltas[i + 1] ?? 0) / 1000;
    const b = Math.floor((ts - T0) / 1000 / BIN); if (b < 0) continue;
    bins[b] ??= new Map(); bins[b].set(name, (bins[b].get(name) ?? 0) + dt);
  }
  const busy = bins.reduce((a, m) => a + (m ? [...m.values()].reduce((x, y) => x + y, 0) : 0), 0);
  if (busy < 5) continue;
  console.log(`== ${names.get(p.thread)} ${p.thread} busy ${busy.toFixed(0)}`);
  bins.forEach((m, b) => { if (!m) return; const tot = [...m.values()].reduce((x, y) => x + y, 0); if (tot < 2) return;
    const tops = [...m].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([n, v]) => `${String(n).slice(0, 50)}:${v.toFixed(0)}`).join(' | ');
    console.log(`  ${String(b * BIN).padStart(5)} ${tot.toFixed(0).padStart(3)}  ${tops}`); });
}
// resource requests
console.log('== resources');
for (const e of events) {
  if (e.name === 'ResourceSendRequest') console.log(`  ${((e.ts - T0) / 1000).toFixed(0).padStart(5)} send ${e.args.data.url.split('/').pop()}`);
  if (e.name === 'ResourceFinish') console.log(`  ${((e.ts - T0) / 1000).toFixed(0).padStart(5)} finish ${e.args.data.requestId}`);
}
console.log('== timers >=1ms');
const installs = new Map();
for (const e of events) if (e.name === 'TimerInstall') installs.set(e.args.data.timerId + '@' + e.tid, e);
for (const e of events) if (e.name === 'TimerFire') { const i = installs.get(e.args.data.timerId + '@' + e.tid); console.log(`  ${((e.ts - T0) / 1000).toFixed(0).padStart(5)} ${(names.get(`${e.pid}:${e.tid}`)??'').slice(0,12)} fire timeout ${i?.args.data.timeout} installed ${i ? ((i.ts - T0) / 1000).toFixed(0) : '?'}`); }
