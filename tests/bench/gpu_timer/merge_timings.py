#!/usr/bin/env python3
"""Adds configurations timed on another GPU machine to a table's timings.

Usage: merge_timings.py BASE RUN1 RUN2 OUT

BASE is the timings.tsv a table was imported from; RUN1 and RUN2 are two
`tests/bench/gpu_cost_table measure` runs (their timings.tsv) of a list that
holds the new configurations and some of BASE's own as anchors. Machines of
one kind differ by a percent or so, so the new configurations are not
written at the other machine's scale: each is the geometric mean of its two
runs divided by the anchors' median ratio (other machine / BASE). Anchors
are reported, never replaced. OUT is BASE plus the new configurations, for
`tests/bench/gpu_cost_table import`.
"""
import math
import statistics
import sys


def read(path):
    """The fingerprint line and {configuration: seconds} of a timings file."""
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or not lines[0].startswith("fingerprint "):
        sys.exit(f"merge_timings: {path}: not a timings file (its first line is not 'fingerprint ...')")
    times = {}
    for number, line in enumerate(lines[1:], start=2):
        seconds, sep, config = line.partition("\t")
        try:
            times[config] = float(seconds)
        except ValueError:
            sys.exit(f"merge_timings: {path}:{number}: expected 'SECONDS<tab>CONFIGURATION'")
        if not sep:
            sys.exit(f"merge_timings: {path}:{number}: expected 'SECONDS<tab>CONFIGURATION'")
    return lines[0], times


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    base_path, run1_path, run2_path, out_path = sys.argv[1:]
    fingerprint, base = read(base_path)
    runs = [read(run1_path), read(run2_path)]
    for path, (other, _) in zip((run1_path, run2_path), runs):
        if other != fingerprint:
            sys.exit(f"merge_timings: {path} was measured by '{other}', {base_path} by '{fingerprint}': "
                     "only timings of the same GPU, libraries and timer can share a table")
    first, second = runs[0][1], runs[1][1]
    both = [c for c in first if c in second]
    if not both:
        sys.exit("merge_timings: the two runs time no configuration in common")
    spread = sorted(abs(first[c] / second[c] - 1) for c in both)
    mean = {c: math.sqrt(first[c] * second[c]) for c in both}
    ratios = sorted(mean[c] / base[c] for c in both if c in base)
    if not ratios:
        sys.exit("merge_timings: no anchors (configurations also in BASE) to bring the runs to BASE's scale")
    scale = statistics.median(ratios)
    added = {c: t / scale for c, t in mean.items() if c not in base}
    print(f"runs agree: median {statistics.median(spread) * 100:.2f}%, "
          f"90th percentile {spread[int(0.9 * len(spread))] * 100:.2f}%")
    print(f"anchors: {len(ratios)}, this machine / base: median {scale:.4f}, "
          f"10th percentile {ratios[len(ratios) // 10]:.4f}, 90th {ratios[9 * len(ratios) // 10]:.4f}")
    print(f"new configurations: {len(added)}, divided by {scale:.4f}")
    with open(out_path, "w") as f:
        f.write(fingerprint + "\n")
        for config, seconds in list(base.items()) + list(added.items()):
            f.write(f"{seconds:.9g}\t{config}\n")


if __name__ == "__main__":
    main()
