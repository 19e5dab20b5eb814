"""Reads the censuses the counting fake of CUDA (runtime/test/fakecuda/) wrote
for two runs of the same program, one of ONE and one of MANY repetitions
(tp-run --repeat), and prints what each extra repetition costs: every counter
of MANY less that of ONE, divided by MANY - ONE (exactly: a count that does
not divide is printed as a fraction, and the test that reads it fails).
Counters a census has more than once (several processes) are added up.

usage: census.py ONE.txt MANY.txt ONE MANY [COUNTER...]
  with COUNTERs, only those, in that order (0 for one never counted);
  without, every counter either census has, sorted.
"""
import sys
from fractions import Fraction


def read(path):
    counts = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line == "---":
                continue
            name, value = line.rsplit(" ", 1)
            counts[name] = counts.get(name, 0) + int(value)
    return counts


def main():
    one, many = read(sys.argv[1]), read(sys.argv[2])
    runs = int(sys.argv[4]) - int(sys.argv[3])
    names = sys.argv[5:] or sorted(set(one) | set(many))
    print("per extra run (%d extra):" % runs)
    for name in names:
        per = Fraction(many.get(name, 0) - one.get(name, 0), runs)
        print("  %s %s" % (name, per))


if __name__ == "__main__":
    main()
