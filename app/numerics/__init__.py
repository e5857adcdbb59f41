"""The Numerics tab: compare the open program with a candidate, the error on the graph, go to the first divergence."""
