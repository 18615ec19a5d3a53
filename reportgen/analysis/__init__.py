"""Compute and decide: per-question metrics, paired statistics, slices, verdicts and gates."""
