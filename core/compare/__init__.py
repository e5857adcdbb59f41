"""Two programs side by side: which nodes became which (the mapping) and what a compare view shows."""
