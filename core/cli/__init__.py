"""The command line's Qt-free subcommands: info, export, decompose, run."""
