"""parley tui."""
