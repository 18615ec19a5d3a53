"""Limits of options that more than one stage reads: the command's ranges, and the warnings
that name a value past them (a leaf, so that no stage imports the command for it)."""

MAX_N_BOOT = 100_000  # --n-boot's largest: 20 times the default; the run time grows linearly
