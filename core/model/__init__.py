"""The program model: typed dataclasses of what a `.pt2` holds, symbolic expressions, node metadata and kinds."""
