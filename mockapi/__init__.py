"""parley mockapi."""
