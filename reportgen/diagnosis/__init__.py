"""Which link of the chain (retrieval, context, generation) failed, and what to try next."""
