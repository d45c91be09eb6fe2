"""quotagov.governance."""
