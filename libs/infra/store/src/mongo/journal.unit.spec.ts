import { contiguousRuns } from './journal';

describe('contiguousRuns (outbox marks as whole-commit ranges)', () => {
  it('groups seqs into runs of consecutive numbers, in order, without repeats', () => {
    expect(contiguousRuns([3, 1, 2, 2, 7, 8, 10])).toEqual([
      [1, 3],
      [7, 8],
      [10, 10],
    ]);
    expect(contiguousRuns([])).toEqual([]);
  });
});
