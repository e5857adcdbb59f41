"""Small leaf helpers with no knowledge of programs: lazy attributes, counts in words, atomic file writes."""
