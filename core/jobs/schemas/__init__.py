"""Every job's request and result as dataclasses, one module per job kind, read with validation and written as the
documented JSON (`base` says how). The worker writes through these modules; the window and the command line read
through them."""
