"""Load and validate: run logs in any supported format become checked DuckDB relations.

Everything here runs before any metric is computed; a log that passes is in the contract.
"""
