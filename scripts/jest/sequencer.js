// Runs the longest suites first so the two CI workers finish together. A clean clone (CI) has no
// timings cached, and jest's fallback (larger files first) started the chaos suite, ~15 minutes
// on one worker, after most of the rest: the run then waited on it alone. By kind, heaviest
// first: chaos, end-to-end, integration, unit; within a kind, jest's own order (cached duration,
// else file size).
const Sequencer = require('@jest/test-sequencer').default;

const rank = (path) => (/\/tests\/chaos\/.*\.e2e\.spec\.ts$/.test(path) ? 0 : path.endsWith('.e2e.spec.ts') ? 1 : path.endsWith('.int.spec.ts') ? 2 : 3);

class HeaviestFirst extends Sequencer {
  sort(tests) {
    const order = new Map(super.sort([...tests]).map((test, i) => [test, i]));
    return [...tests].sort((a, b) => rank(a.path) - rank(b.path) || order.get(a) - order.get(b));
  }
}

module.exports = HeaviestFirst;
