"""Driving worker jobs from the GUI thread, and the Preferences for the Python that runs them."""
