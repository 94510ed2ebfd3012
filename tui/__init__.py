"""parley's faces: the terminal app (app), the command line (cli), the pytest plugin, and the text they show (terminal_text)."""
