"""parley core."""
