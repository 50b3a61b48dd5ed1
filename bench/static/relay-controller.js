// The output baseline's "controller" (e2e/bench/run.mjs, relayBaseline):
// relays every message from the runtime's port to the page, no journal.
onmessage = (e) => {
  e.data[0].onmessage = (m) => postMessage(m.data);
};
