"""The views of a program as deployed, the window side of core/deploy/: an ExecuTorch `.pte`'s memory plan, delegates
and data (beside its graph), the Lower to ExecuTorch dialog, and an AOTInductor package's tab."""
