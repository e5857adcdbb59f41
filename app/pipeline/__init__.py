"""Views of what a program becomes further down the pipeline: an ExecuTorch `.pte`'s memory plan, delegates and data
(beside its graph), and an AOTInductor package's tab."""
