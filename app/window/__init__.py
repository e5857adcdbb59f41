"""The pieces the main window (app/main_window.py) assembles: the Program menu's comparisons, the File menu's saving
dialogs, recent files, and keeping the window on its screen. Each holds the code of one concern so the window holds
none."""
