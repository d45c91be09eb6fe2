"""quotagov.handlers."""
