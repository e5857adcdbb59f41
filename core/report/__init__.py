"""The shareable report: one self-contained HTML file for a program or a model script (docs/report.md)."""
