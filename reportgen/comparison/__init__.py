"""One baseline against each candidate: the pairwise comparison and the N-run study around it."""
