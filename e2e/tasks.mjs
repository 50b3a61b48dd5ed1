import { readFileSync } from 'node:fs';
const t = JSON.parse(readFileSync('/tmp/rep/trace-visit.json', 'utf8'));
const events = t.traceEvents ?? t;
const names = new Map();
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
const T0 = Math.min(...events.filter(e=>e.ts>0).map(e => e.ts));
const want = process.env.THREAD ?? 'CrRendererMain';
const tasks = events.filter(e => e.ph === 'X' && e.name === 'RunTask' && (names.get(`${e.pid}:${e.tid}`) ?? '').startsWith(want) && e.dur > (Number(process.env.MIN ?? 2)) * 1000);
tasks.sort((a, b) => a.ts - b.ts);
for (const task of tasks) {
  const kids = events.filter(e => e.ph === 'X' && e.tid === task.tid && e.pid === task.pid && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur && e !== task && e.dur > 500 && e.name !== 'RunTask' && e.name !== 'ThreadControllerImpl::RunTask');
  kids.sort((a,b)=>a.ts-b.ts);
  console.log(((task.ts - T0) / 1000).toFixed(0).padStart(5), (task.dur / 1000).toFixed(1).padStart(6), names.get(`${task.pid}:${task.tid}`).slice(0,14), kids.slice(0, 6).map(k => `${k.name}${k.args?.data?.functionName ? '(' + k.args.data.functionName + ')' : ''}${k.args?.data?.type ? '[' + k.args.data.type + ']' : ''}:${(k.dur/1000).toFixed(1)}`).join(' '));
}
