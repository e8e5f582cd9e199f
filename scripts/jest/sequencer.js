// Orders the suites for two CI workers. A clean clone (CI) has no timings cached, and jest's
// fallback (larger files first) leaves the order to chance. End-to-end suites first (both workers);
// then the chaos suite, ~15 minutes on one worker, which times recoveries and so runs beside the
// lighter integration and unit suites rather than beside other whole platforms; then those. Within
// a kind, jest's own order (cached duration, else file size).
const Sequencer = require('@jest/test-sequencer').default;

const CHAOS = /\/tests\/chaos\/.*\.e2e\.spec\.ts$/;
const rank = (path) => (CHAOS.test(path) ? 1 : path.endsWith('.e2e.spec.ts') ? 0 : path.endsWith('.int.spec.ts') ? 2 : 3);

class SuiteOrder extends Sequencer {
  sort(tests) {
    const order = new Map(super.sort([...tests]).map((test, i) => [test, i]));
    return [...tests].sort((a, b) => rank(a.path) - rank(b.path) || order.get(a) - order.get(b));
  }
}

module.exports = SuiteOrder;
