"""Numerics: compare a program with a candidate (a decomposition, a lower precision, another device, a compiled
build) node by node on the same inputs, and find the first node where the numbers go wrong."""
