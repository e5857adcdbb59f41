"""The model zoo: real architectures (torchvision, HuggingFace families built from their `Config` classes, plain
`torch.nn` blocks, a few ExportDB cases) exported by this machine's torch with random weights, no downloads.

The viewer is only proved on the programs it has read; these are the programs users bring. `registry.py` lists the
entries, `cache.py` exports each one once (training IR and after `run_decompositions()`) into `.cache/zoo/`, and
`scripts/zoo.py` runs every cached program through every command of the app and checks the answers against torch.
"""
