"""What changed between two programs: nodes matched (provenance, else structure), classified, rolled up by module."""
