"""Running a program: inputs (sample or generated), the worker job, output statistics, timing, and the run panel's
state."""
