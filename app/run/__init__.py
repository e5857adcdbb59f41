"""The Run tab."""
