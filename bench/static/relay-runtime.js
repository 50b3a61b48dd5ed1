// The output baseline's "runtime" (e2e/bench/run.mjs, relayBaseline): writes
// `seq 1 last` in the 8 KiB pieces the shell's `seq` writes, each as a JSON
// text message, to the port it is given; then a last `done` message.
onmessage = (e) => {
  const [port, last] = e.data;
  let text = '';
  let seq = 0;
  for (let i = 1; i <= last; i++) {
    text += i + '\n';
    if (text.length >= 8192) {
      port.postMessage(JSON.stringify({ seq: ++seq, data: text }));
      text = '';
    }
  }
  if (text) port.postMessage(JSON.stringify({ seq: ++seq, data: text }));
  port.postMessage(JSON.stringify({ done: true }));
};
